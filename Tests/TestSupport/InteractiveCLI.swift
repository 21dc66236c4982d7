import Foundation

/// A built program (the `multiview` CLI) with a pipe on its stdin, for commands sent while it runs, and its stdout
/// and stderr in files of its own, read while it runs: a file never fills and blocks the program the way an unread
/// pipe does, and a failing test can print what the program said (`transcript`).
///
/// Owned by one test (not Sendable); the polling waits sleep between reads of the files.
public final class InteractiveCLI {
    private let process = Process()
    private let input = Pipe()
    private let directory: TemporaryDirectory

    /// Starts `arguments[0]` with the rest as its arguments; `environment` is added to the test's own.
    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        directory = try TemporaryDirectory(prefix: "mv-interactive")
        for name in ["stdout", "stderr"] {
            FileManager.default.createFile(atPath: directory.path(name), contents: nil)
        }
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: directory.url.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: directory.url.appendingPathComponent("stderr"))
        try process.run()
    }

    private func read(_ name: String) -> String {
        (try? String(contentsOfFile: directory.path(name), encoding: .utf8)) ?? ""
    }
    public var stdout: String { read("stdout") }
    public var stderr: String { read("stderr") }
    /// The last line the program wrote to stdout (its latest status line while it plays).
    public var lastStatusLine: String { stdout.split(separator: "\n").last.map(String.init) ?? "" }
    /// The tail of both outputs, for a failure message.
    public var transcript: String { "stdout:\n\(stdout.suffix(1500))\nstderr:\n\(stderr.suffix(2500))" }

    /// Running, and not merely a zombie: Foundation's `Process` was seen not to reap an exited CLI while a test
    /// waited (state Z for seconds), so the kernel's view of the process decides.
    public var isRunning: Bool {
        guard process.isRunning else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        // The state follows the command name's closing parenthesis: "pid (comm) S ...".
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// Sends one line on the program's stdin; false when the program already ended and cannot read it (never a
    /// crash of the test runner: see `FileHandle.sendLine`).
    @discardableResult
    public func send(_ line: String) -> Bool {
        guard process.isRunning else { return false }
        return input.fileHandleForWriting.sendLine(line)
    }

    /// Polls the output until `condition` holds (true) or `timeout` passes (false). For synchronous tests.
    public func wait(timeout: Duration = .seconds(30), _ condition: (InteractiveCLI) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition(self)
    }

    /// The same for async tests: sleeps without holding a thread of the cooperative pool.
    public func wait(upTo timeout: Duration, _ condition: (InteractiveCLI) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(self)
    }

    /// The exit status once the program ended within `timeout`, nil while it still runs.
    public func waitForExit(timeout: Duration = .seconds(5)) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// Whether the program ended within `timeout` (the kernel's view: a zombie has ended), polled every 10 ms.
    public func ended(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        return !isRunning
    }

    /// Ends the program if it still runs (SIGKILL: a test's clean-up must not depend on the program's own shutdown).
    public func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
