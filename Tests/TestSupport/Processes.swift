import Foundation
import Synchronization

// Running other programs from tests: one runner for tools run to completion (pactl, gdbus, playerctl, the multiview
// CLI, shell scripts), one pair for programs kept running in the background (Xvfb, paplay, parecord, daemons).
//
// Two facts of this machine shape them:
// - Children of the test process inherit a signal mask that blocks SIGINT and SIGTERM (seen in /proc/PID/status),
//   so a child that must go is sent SIGKILL.
// - Foundation's Process learns of a child's end only once every process holding its inherited descriptors is gone,
//   so a script that leaves a daemon behind never "ends". The runner therefore spawns with posix_spawn, waits for
//   exactly that pid (waitpid), and gives the child files, not pipes, for its output: nothing the child leaves
//   behind can hold the runner (or swift test's own pipes) open.

/// What a program run to completion left behind.
public struct ToolResult: Sendable {
    /// The exit status; 128 + the signal number when a signal ended the program (as a shell reports it).
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Standard output followed by standard error (for messages, and for tools that answer on either).
    public var output: String { stdout + stderr }
}

/// Runs a program to completion: `arguments[0]` is an absolute path or a name looked up on PATH. Standard input is
/// `stdin` (then end of file), or /dev/null. The environment is `environment` when given, else this process's.
/// A program still running after `timeout` is killed (SIGKILL) and the call throws `TestFailure`.
@discardableResult
public func runTool(_ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil,
                    timeout: Duration = .seconds(60)) throws -> ToolResult {
    guard let program = arguments.first else { throw TestFailure("runTool: no program named") }
    let files = FileManager.default.temporaryDirectory.appendingPathComponent("mv-tool-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: files) }
    let inputPath = files.appendingPathComponent("stdin").path
    let outputPath = files.appendingPathComponent("stdout").path
    let errorPath = files.appendingPathComponent("stderr").path
    if let stdin { _ = FileManager.default.createFile(atPath: inputPath, contents: Data(stdin.utf8)) }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin == nil ? "/dev/null" : inputPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
    defer { envp?.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = envp.map { posix_spawnp(&pid, program, &actions, nil, argv, $0) }
        ?? posix_spawnp(&pid, program, &actions, nil, argv, environ)
    guard spawned == 0 else { throw TestFailure("cannot run \(program): \(String(cString: strerror(spawned)))") }

    let deadline = ContinuousClock.now + timeout
    var status: Int32 = 0
    var pause = 0.001
    while true {
        let waited = waitpid(pid, &status, WNOHANG)
        if waited == pid { break }
        if waited == -1 && errno != EINTR {
            throw TestFailure("waiting for \(program) failed: \(String(cString: strerror(errno)))")
        }
        if ContinuousClock.now > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            throw TestFailure("\(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        Thread.sleep(forTimeInterval: pause)
        pause = min(pause * 2, 0.02)
    }
    let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    return ToolResult(status: exit, stdout: text(outputPath), stderr: text(errorPath))
}

/// Runs several programs at once, each to completion as `runTool` does, and returns their results in order: for
/// tests whose runs are independent and mostly wait (a CLI played for a fixed `--duration`), so they cost the
/// longest run's time instead of the sum.
public func runToolsAtOnce(_ runs: [(arguments: [String], stdin: String?)],
                           timeout: Duration = .seconds(60)) -> [Result<ToolResult, any Error>] {
    // A thread each, not concurrentPerform: that runs at most one iteration per core, so a third run on two cores
    // waited for the first two. Each slot is written once, by its own thread; the Mutex owns the array.
    let results = Mutex<[Result<ToolResult, any Error>?]>(Array(repeating: nil, count: runs.count))
    let finished = DispatchGroup()
    for (i, run) in runs.enumerated() {
        finished.enter()
        Thread.detachNewThread {
            let result = Result { try runTool(run.arguments, stdin: run.stdin, timeout: timeout) }
            results.withLock { $0[i] = result }
            finished.leave()
        }
    }
    finished.wait()
    return results.withLock { $0.enumerated().map { $1 ?? .failure(TestFailure("run \($0 + 1) left no result")) } }
}

/// `runTool` with the program and its arguments apart.
@discardableResult
public func runTool(_ program: String, _ arguments: [String], environment: [String: String]? = nil,
                    stdin: String? = nil, timeout: Duration = .seconds(60)) throws -> ToolResult {
    try runTool([program] + arguments, environment: environment, stdin: stdin, timeout: timeout)
}

/// Starts a program in the background (`arguments[0]` looked up on PATH). Its output goes to the file `output`, or
/// is discarded, so it can never hold the test runner's pipes open. The caller ends it with `stopTool`.
public func startTool(_ arguments: [String], output: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    if let output {
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = FileHandle(forWritingAtPath: output)
        process.standardOutput = handle
        process.standardError = handle
    } else {
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
    }
    try process.run()
    return process
}

/// Ends a program started with `startTool` (SIGKILL: see the top of this file) and waits for it.
public func stopTool(_ process: Process) {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

/// A temporary directory, removed on release.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public init(prefix: String = "mvtest") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    /// MULTIVIEW_KEEP_TEST_FILES=1 keeps the directory (logs, render logs) for a look after a run.
    deinit {
        guard ProcessInfo.processInfo.environment["MULTIVIEW_KEEP_TEST_FILES"] != "1" else { return }
        try? FileManager.default.removeItem(at: url)
    }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

extension FileHandle {
    /// Writes `line` and a newline to a child's stdin pipe; false when the child can no longer read it. A child that
    /// already ended would otherwise raise SIGPIPE in the test process and end it, and with it every later test of
    /// the shard; broken pipes are ignored process-wide (once) and reported as a failed write instead.
    @discardableResult
    public func sendLine(_ line: String) -> Bool {
        _ = brokenPipesIgnored
        do {
            try write(contentsOf: Data((line + "\n").utf8))
            return true
        } catch {
            return false
        }
    }
}

/// SIGPIPE ignored for the whole test process, the first time a test writes to a child (a lazy global runs once).
private let brokenPipesIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()
/// A program kept running in the background whose output (standard output and error together) goes to a file of
/// its own, so that a test failing because of it can say what it printed (`output`) — a program whose output is
/// thrown away leaves a CI failure undiagnosable. A file, not a pipe: nothing the program leaves behind can hold the
/// test runner's pipes open, and no pipe can fill up and block it while nobody reads.
public final class BackgroundTool: Sendable {
    public let process: Process
    /// The file holding what it printed (removed on release).
    public let outputPath: String

    /// Starts `arguments` (`arguments[0]` looked up on PATH), as `startTool` does.
    public init(_ arguments: [String]) throws {
        outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("mv-tool-\(UUID().uuidString).log").path
        process = try startTool(arguments, output: outputPath)
    }

    deinit {
        stopTool(process)
        try? FileManager.default.removeItem(atPath: outputPath)
    }

    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: pid_t { process.processIdentifier }

    /// What it printed so far (its last `limit` characters), for failure messages.
    public func output(limit: Int = 4000) -> String {
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return text.count > limit ? "…" + String(text.suffix(limit)) : text
    }

    /// Its exit status once ended, for failure messages ("running" while it runs).
    public var exitDescription: String {
        process.isRunning ? "running" : "exited with status \(process.terminationStatus) (\(process.terminationReason == .uncaughtSignal ? "signal" : "exit"))"
    }

    /// Ends it (SIGKILL, see `stopTool`) and waits for it.
    public func stop() { stopTool(process) }
}
