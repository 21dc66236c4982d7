import Foundation

/// Scripts/lib/hls-server.py as a child process: a real HTTP/1.1 server (with Range) on 127.0.0.1 serving `root`,
/// optionally pacing all its responses through one shared link of `rate` bits/s ("6M") and writing what it served
/// to the file `statsPath`.
public final class HLSServer: @unchecked Sendable {
    // Sendable: `process` and `port` change only in start/stop, which the (single) test task calls.
    public let root: String
    public let rate: String?
    public let statsPath: String?
    public private(set) var port: Int = 0
    private var process: BackgroundTool?

    /// Starts the server on a free port.
    public init(root: String, rate: String? = nil, statsPath: String? = nil) throws {
        self.root = root; self.rate = rate; self.statsPath = statsPath
        try start()
    }

    deinit { stop() }

    /// The address of `path` below the root.
    public func url(_ path: String) -> URL { URL(string: uri(path))! }
    /// The address of `path` below the root, as a string (what MediaSource and the CLI take).
    public func uri(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// Starts (again): on the same port as before when it ran already. Waits until the server wrote its port.
    public func start() throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("hls-port-\(UUID().uuidString)").path
        var arguments = ["python3", repoRoot.appendingPathComponent("Scripts/lib/hls-server.py").path, "--root", root,
                         "--port", String(port), "--port-file", portFile]
        if let rate { arguments += ["--rate", rate] }
        if let statsPath { arguments += ["--stats", statsPath] }
        // Output to a file (BackgroundTool), never swift test's pipes: a server left behind by a crashed test would
        // keep them open and hang `swift test`.
        let process = try BackgroundTool(arguments)
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && process.isRunning {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let p = Int(text) {
                port = p
                try? FileManager.default.removeItem(atPath: portFile)
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let exit = process.exitDescription, output = process.output()
        stop()
        throw TestFailure("hls-server.py did not start (\(exit); python3 missing? run Scripts/setup): \(output)")
    }

    /// Ends the server (SIGKILL, see `stopTool`) and waits for it.
    public func stop() {
        guard let process else { return }
        process.stop()
        self.process = nil
    }
}
