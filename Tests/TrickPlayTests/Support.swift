import Foundation
import TestSupport
import XCTest

// The real HTTP server for the HLS set (TestSupport has make-hls, repoRoot, eventually).

/// Scripts/lib/hls-server.py as a child process: a real HTTP/1.1 server (with Range) on 127.0.0.1.
final class HLSServer: @unchecked Sendable {
    // Sendable: `process` and `port` are set in init and cleared by stop(), which the (single) test task calls.
    private(set) var port: Int = 0
    private var process: Process?

    init(root: String) throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("hls-port-\(UUID().uuidString)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [repoRoot.appendingPathComponent("Scripts/lib/hls-server.py").path, "--root", root,
                             "--port", "0", "--port-file", portFile]
        process.standardError = FileHandle.nullDevice
        // Not the test's stdout: a server outliving a crashed test process would keep swift-test's pipe open.
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let p = Int(text) {
                port = p
                try? FileManager.default.removeItem(atPath: portFile)
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        stop()
        throw TestFailure("hls-server.py did not start (python3 missing? run Scripts/setup)")
    }

    deinit { stop() }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }
}

/// Collects trick-play events (appended from the trick player's task, read by the test).
final class EventLog: @unchecked Sendable {
    // Sendable: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [String] = []
    private var times: [Double] = []
    private var ends: [Double] = []
    private var failures: [String] = []

    func record(_ event: TrickPlayEventSummary) {
        lock.withLock {
            switch event {
            case .frame(let t): times.append(t)
            case .end(let p): ends.append(p)
            case .failure(let s): failures.append(s)
            }
        }
    }
    var frameTimes: [Double] { lock.withLock { times } }
    var endPositions: [Double] { lock.withLock { ends } }
    var failureLines: [String] { lock.withLock { failures } }
}

enum TrickPlayEventSummary { case frame(Double), end(Double), failure(String) }
