import Foundation
import TestSupport

/// The built binary with a pipe on its stdin (commands sent while it runs) and its output in files (read while it
/// runs, never blocking it).
final class Interactive {
    private let process = Process()
    private let input = Pipe()
    private let directory: URL

    init(_ arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mv-interactive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in ["stdout", "stderr"] {
            FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
        }
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
        try process.run()
    }

    private func read(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }
    var stdout: String { read("stdout") }
    var stderr: String { read("stderr") }
    var transcript: String { "stdout:\n\(stdout.suffix(1500))\nstderr:\n\(stderr.suffix(1500))" }

    /// False when the binary already ended (see `sendLine`).
    @discardableResult
    func send(_ line: String) -> Bool { input.fileHandleForWriting.sendLine(line) }

    /// Polls the output until `condition` holds (true) or `timeout` passes (false).
    func wait(timeout: Duration = .seconds(30), _ condition: (Interactive) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition(self)
    }

    func waitForExit(timeout: Duration = .seconds(5)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? nil : process.terminationStatus
    }

    func kill() {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }
}
