import Foundation
import Synchronization
import TestSupport
import XCTest

/// A link shaped by the kernel: a network namespace joined to this one by a veth pair whose namespace end sends
/// through `tc ... tbf` at `rate` (downloads leave the server there). Needs root and `ip netns`; when the first
/// step is refused the test is skipped with that step and its error named (nothing else skips).
final class NetworkNamespaceLink: @unchecked Sendable {
    // Sendable: immutable after init; `close` runs once from the owning test.
    let namespace: String
    let hostAddress: String
    let serverAddress: String
    private let serverSide: String
    private static let counter = Mutex(0)

    init(rate: String) throws {
        let n = Self.counter.withLock { c in defer { c += 1 }; return c }
        let tag = "\(getpid() % 100_000)\(n)"
        namespace = "mvprio\(tag)"
        let hostSide = "mvh\(tag)", serverSide = "mvs\(tag)"
        self.serverSide = serverSide
        let subnet = Int(getpid() % 200) + 20
        hostAddress = "10.\(subnet).\(n % 250).1"
        serverAddress = "10.\(subnet).\(n % 250).2"
        let created = try runTool(["ip", "netns", "add", namespace])
        guard created.status == 0 else {
            throw XCTSkip("tc-shaped link: `ip netns add \(namespace)` failed (\(created.output.trimmingCharacters(in: .whitespacesAndNewlines))); network namespaces need root")
        }
        let steps: [[String]] = [
            ["ip", "link", "add", hostSide, "type", "veth", "peer", "name", serverSide],
            ["ip", "link", "set", serverSide, "netns", namespace],
            ["ip", "addr", "add", "\(hostAddress)/30", "dev", hostSide],
            ["ip", "link", "set", hostSide, "up"],
            ["ip", "netns", "exec", namespace, "ip", "addr", "add", "\(serverAddress)/30", "dev", serverSide],
            ["ip", "netns", "exec", namespace, "ip", "link", "set", serverSide, "up"],
            ["ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up"],
            ["ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", serverSide, "root"] + Self.tbf(rate),
        ]
        for step in steps {
            let result = try runTool(step)
            if result.status != 0 {
                close()
                throw TestFailure("tc-shaped link: `\(step.joined(separator: " "))` failed: \(result.output)")
            }
        }
    }

    /// tbf with a 64 KB bucket and 100 ms of queue (a home link's buffer, not netem: that qdisc is missing here).
    static func tbf(_ rate: String) -> [String] {
        ["tbf", "rate", rate.lowercased().hasSuffix("m") ? String(rate.dropLast()) + "mbit" : rate, "burst", "64kb", "latency", "100ms"]
    }

    /// Changes the link's rate while it carries traffic.
    func setRate(_ rate: String) throws {
        let result = try runTool(["ip", "netns", "exec", namespace, "tc", "qdisc", "change", "dev", serverSide, "root"] + Self.tbf(rate))
        if result.status != 0 { throw TestFailure("tc qdisc change: \(result.output)") }
    }

    /// Removes the namespace (and with it the veth pair and the qdisc).
    func close() { _ = try? runTool(["ip", "netns", "del", namespace]) }
    deinit { close() }
}

/// Scripts/lib/hls-server.py with the options these tests need (a rate schedule, `--repeat`), on loopback or
/// inside a `NetworkNamespaceLink`.
final class LinkServer: @unchecked Sendable {
    // Sendable: immutable after init; `stop` runs once from the owning test.
    private let process: BackgroundTool
    let host: String
    let port: Int
    /// The server's own process id (`process` may be a launcher running the interpreter as its child).
    private let serverPID: pid_t

    init(root: String, rate: String? = nil, repeatCount: Int = 1, link: NetworkNamespaceLink? = nil) throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("link-port-\(UUID().uuidString)").path
        let pidFile = portFile + ".pid"
        host = link?.serverAddress ?? "127.0.0.1"
        var arguments = ["python3", repoRoot.appendingPathComponent("Scripts/lib/hls-server.py").path, "--root", root,
                         "--port", "0", "--port-file", portFile, "--pid-file", pidFile, "--bind", host,
                         "--repeat", String(repeatCount)]
        if let rate { arguments += ["--rate", rate] }
        if let link { arguments = ["ip", "netns", "exec", link.namespace] + arguments }
        process = try BackgroundTool(arguments)
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        while Date() < deadline && process.isRunning {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let p = Int(text) { found = p; break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // The pid file is written before the port file.
        let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0) }
        try? FileManager.default.removeItem(atPath: portFile)
        try? FileManager.default.removeItem(atPath: pidFile)
        guard let found, let pid else {
            let exit = process.exitDescription
            process.stop()
            throw TestFailure("hls-server.py did not start (\(arguments.joined(separator: " ")); \(exit)): \(process.output())")
        }
        port = found
        serverPID = pid
    }

    func uri(_ path: String) -> String { "http://\(host):\(port)/\(path)" }
    /// The rate schedule's next step starts now (SIGUSR1 to hls-server.py): the link changes when the test's
    /// players are where it wants them, not at a time guessed to come after that.
    func startNextRateStep() throws {
        guard kill(serverPID, SIGUSR1) == 0 else { throw TestFailure("SIGUSR1 to hls-server.py (\(serverPID)): errno \(errno)") }
    }
    func stop() { process.stop() }
    /// What the server printed (for failure messages).
    var output: String { process.output() }
    deinit { stop() }
}
