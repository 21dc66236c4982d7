import Foundation
import TestSupport
import XCTest

/// A `multiview` process (host or member) started by a test: stdin is a pipe the test writes commands to,
/// stdout and stderr go to files the test reads while it runs. Ended with SIGKILL if still running on release.
final class SessionProcess: @unchecked Sendable {
    // @unchecked: `process` and `input` are set once in init and only used from the test's own thread (XCTest
    // runs a test method on one thread); the files are read, never shared mutable state.
    static let binary = repoRoot.appendingPathComponent(".build/debug/multiview").path
    let process = Process()
    private let input = Pipe()
    let stdoutPath: String
    let stderrPath: String
    let name: String

    /// `launcher`: a command prefix the binary runs under (`NetworkNamespace.launcher`: inside a namespace).
    init(_ name: String, _ arguments: [String], directory: TemporaryDirectory, launcher: [String] = []) throws {
        self.name = name
        stdoutPath = directory.path("\(name).stdout")
        stderrPath = directory.path("\(name).stderr")
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Self.binary)
        process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [Self.binary] + arguments
        process.standardInput = input
        process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }

    var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// False when the process already ended (see `sendLine`).
    @discardableResult
    func send(_ line: String) -> Bool { input.fileHandleForWriting.sendLine(line) }

    /// A host's port, from its "listening on ADDRESS:PORT" line (`address` as given to `--listen`, e.g. 0.0.0.0).
    func waitForListeningPort(on address: String, timeout: Duration = .seconds(15)) async throws -> Int {
        let pattern = "listening on " + NSRegularExpression.escapedPattern(for: address) + #":(\d+)"#
        var port = 0
        try await waitFor("listening line", timeout: timeout) { _, err in
            guard let range = err.range(of: pattern, options: .regularExpression) else { return false }
            port = Int(err[range].split(separator: ":").last ?? "") ?? 0
            return port > 0
        }
        return port
    }

    /// Waits until `condition` holds for the output so far; fails naming the process and its output otherwise, with
    /// the stderr of the test's other processes (the cause is often on the other side of the session).
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(15), _ condition: (_ stdout: String, _ stderr: String) -> Bool)
        async throws -> String {
        let met = await eventually(timeout: timeout) { condition(stdout, stderr) }
        guard met else {
            throw TestFailure("\(name): no \(what) within \(timeout)\nstdout tail: \(stdout.suffix(2500))\nstderr: \(stderr.suffix(3000))"
                              + othersOutput())
        }
        return stderr
    }

    /// The stderr tails of the other processes started in the same directory.
    private func othersOutput() -> String {
        let directory = (stderrPath as NSString).deletingLastPathComponent
        let others = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".stderr") && $0 != (stderrPath as NSString).lastPathComponent }.sorted()
        return others.map { file in
            let text = (try? String(contentsOfFile: (directory as NSString).appendingPathComponent(file), encoding: .utf8)) ?? ""
            return "\n\(file) (another process of this test): \(text.suffix(1500))"
        }.joined()
    }

    func waitForLine(containing text: String, timeout: Duration = .seconds(15)) async throws {
        try await waitFor("\"\(text)\"", timeout: timeout) { out, err in err.contains(text) || out.contains(text) }
    }

    /// The last status line shows `count` views PLAYING, none of them waiting to play. A view "PLAYING [waiting for
    /// coordinated playback]" renders nothing yet (it has not joined the group's timeline): LinkFaultTests once cut
    /// the link while the steady member still waited, and its first frame 1.02 s after the cut read as a freeze.
    func waitForPlaying(_ count: Int, timeout: Duration = .seconds(20)) async throws {
        try await waitFor("status line with \(count) × PLAYING", timeout: timeout) { out, _ in
            guard let last = out.split(separator: "\n").last else { return false }
            let playing = last.components(separatedBy: "PLAYING").count - 1
            let waiting = last.components(separatedBy: "PLAYING [waiting").count - 1
            return playing == count && waiting == 0
        }
    }

    /// Waits until four more status lines than now have come, the last two playing: about 3 s of rendering to
    /// compare with the host's (`LinkFaultTests.assertAligned` needs 10 frames both rendered). Two lines (1-2 s)
    /// left 7 such frames in CI under the shards' load: qos drops late frames on either side, and only frames
    /// both rendered count.
    func waitForAlignedPlayback(after event: String, timeout: Duration = .seconds(20)) async throws {
        let lines = stdout.split(separator: "\n").count
        try await waitFor("four status lines after \(event), the last two playing", timeout: timeout) { out, _ in
            let all = out.split(separator: "\n")
            return all.count >= lines + 4 && all.suffix(2).allSatisfy(Self.playsWithNoViewWaiting)
        }
    }

    /// A status line showing PLAYING with no view "PLAYING [waiting …]" (see `waitForPlaying`).
    static func playsWithNoViewWaiting(_ line: Substring) -> Bool {
        line.contains("PLAYING") && !line.contains("[waiting")
    }

    func waitForExit(timeout: Duration = .seconds(10)) async throws -> Int32 {
        guard await eventually(timeout: timeout, { !process.isRunning }) else {
            throw TestFailure("\(name) still running \(timeout) after it was asked to end\nstderr: \(stderr.suffix(2000))")
        }
        return process.terminationStatus
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
