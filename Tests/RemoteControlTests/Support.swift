import Foundation
import GStreamer
import Multiview
import Synchronization
import TestSupport
import XCTest

enum TestMedia {
    static let root = repoRoot
    static func path(_ file: String) -> String { root.appendingPathComponent("Media").appendingPathComponent(file).path }
    static let angle1 = path("angle1-wide.mp4")
    static let angle3 = path("angle3-right.mkv")
    static let multiview = root.appendingPathComponent(".build/debug/multiview").path
}

/// A private D-Bus session bus for one test: `dbus-daemon --session --nofork` as our child, terminated in `stop`.
final class SessionBus: Sendable {
    let address: String
    private let process: Process

    init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            throw TestFailure("dbus-daemon not installed (Debian package dbus: run Scripts/setup)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--print-address=1"]
        let out = Pipe()
        process.standardOutput = out
        // Its errors go to a file (read only on failure; a pipe nobody reads could fill up and block it).
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("dbus-\(UUID().uuidString).err").path
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errors) }
        process.standardError = FileHandle(forWritingAtPath: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The address is the first line it prints once listening.
        var text = ""
        let deadline = Date().addingTimeInterval(10)
        while !text.contains("\n") && Date() < deadline && process.isRunning {
            text += String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("unix:") else {
            stopTool(process)
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw TestFailure("dbus-daemon --session printed no address: '\(text)' (exit \(process.terminationStatus)); stderr: \(stderr)")
        }
        address = String(line)
        self.process = process
    }

    /// The environment of a client of this bus (the child multiview, playerctl, dbus-monitor, gdbus).
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        // The full piped status line (h:mm:ss.mmm positions), which `lastStatus` reads.
        env["MULTIVIEW_STATUS"] = "full"
        return env
    }

    /// Makes this bus the session bus of the test process itself (GDBus reads the variable when connecting).
    func becomeSessionBusOfThisProcess() { setenv("DBUS_SESSION_BUS_ADDRESS", address, 1) }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        usleep(200_000)
        // Foundation starts children with the spawning thread's signal mask, which can block SIGTERM: SIGKILL then.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Tests of a server in this process: a private session bus per test, made this process's session bus for the
/// test (the previous address is restored afterwards). A base class without tests of its own.
class PrivateBusTestCase: XCTestCase {
    var bus: SessionBus!
    private var savedAddress: String?

    override func setUp() async throws {
        bus = try SessionBus()
        savedAddress = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        bus.becomeSessionBusOfThisProcess()
    }

    override func tearDown() async throws {
        if let savedAddress { setenv("DBUS_SESSION_BUS_ADDRESS", savedAddress, 1) } else { unsetenv("DBUS_SESSION_BUS_ADDRESS") }
        bus.stop()
    }
}

/// Reads a process's stdout/stderr as they come (so a chatty child never blocks on a full pipe).
final class OutputCollector: Sendable {
    private final class Text: Sendable {
        let value = Mutex<(out: String, err: String)>(("", ""))
        func withLock<R>(_ body: (inout (out: String, err: String)) -> R) -> R { value.withLock { body(&$0) } }
    }
    private let text = Text()
    private let pipes: (Pipe, Pipe)

    init(_ out: Pipe, _ err: Pipe) {
        pipes = (out, err)
        out.fileHandleForReading.readabilityHandler = { [text] handle in
            let data = handle.availableData
            text.withLock { $0.out += String(decoding: data, as: UTF8.self) }
        }
        err.fileHandleForReading.readabilityHandler = { [text] handle in
            let data = handle.availableData
            text.withLock { $0.err += String(decoding: data, as: UTF8.self) }
        }
    }

    var stdout: String { text.withLock { $0.out } }
    var stderr: String { text.withLock { $0.err } }

    /// Stops reading and returns everything, including what was still in the pipes.
    func finish() -> (String, String) {
        pipes.0.fileHandleForReading.readabilityHandler = nil
        pipes.1.fileHandleForReading.readabilityHandler = nil
        let restOut = (try? pipes.0.fileHandleForReading.readToEnd()).flatMap { $0 } ?? Data()
        let restErr = (try? pipes.1.fileHandleForReading.readToEnd()).flatMap { $0 } ?? Data()
        return text.withLock {
            ($0.out + String(decoding: restOut, as: UTF8.self), $0.err + String(decoding: restErr, as: UTF8.self))
        }
    }
}

/// A long-running child process (the multiview CLI, dbus-monitor) with live output and a stdin pipe.
final class Child: Sendable {
    private let process: Process
    private let input: Pipe
    let output: OutputCollector

    init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestFailure("\(executable) missing (build first: swift build --build-tests, as Scripts/test does)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = TestMedia.root
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        output = OutputCollector(out, err)
        try process.run()
        self.process = process
        self.input = input
    }

    var isRunning: Bool { process.isRunning }

    /// False when the process already ended (see `sendLine`).
    @discardableResult
    func send(_ line: String) -> Bool { input.fileHandleForWriting.sendLine(line) }

    /// Ends the child (closing stdin makes multiview quit; others get SIGTERM), waiting at most `timeout`.
    func stop(timeout: TimeInterval = 15) -> Int32 {
        try? input.fileHandleForWriting.close()
        if process.isRunning && process.executableURL?.lastPathComponent != "multiview" {
            process.terminate()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        // Foundation starts children with the spawning thread's signal mask, which can block SIGTERM: SIGKILL then.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = output.finish()
        return process.terminationStatus
    }
}

/// `playerctl` against a given bus (commands are checked through their effect, so the result may go unused).
@discardableResult
func playerctl(_ arguments: [String], bus: SessionBus) throws -> (status: Int32, stdout: String, stderr: String) {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/playerctl") else {
        throw TestFailure("playerctl not installed (Debian package playerctl: run Scripts/setup)")
    }
    let result = try runTool("/usr/bin/playerctl", arguments, environment: bus.environment)
    return (result.status, result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), result.stderr)
}


/// The MPRIS signals dbus-monitor printed: one entry per signal (member + body text).
struct MonitoredSignal: Sendable {
    var member: String
    var body: String
}

func parseMonitor(_ text: String) -> [MonitoredSignal] {
    text.components(separatedBy: "\nsignal ").dropFirst().compactMap { block in
        guard let range = block.range(of: "member=") else { return nil }
        let member = block[range.upperBound...].prefix { $0 != "\n" && $0 != " " }
        return MonitoredSignal(member: String(member), body: block)
    }
}

/// Status-line positions of every view in the CLI's latest status line: "1 angle1-wide.mp4 PLAYING 0:00:12.921/…".
func lastStatus(_ stdout: String) -> [(state: String, seconds: Double)]? {
    guard let line = stdout.split(separator: "\n").last(where: { $0.hasPrefix("[") }) else { return nil }
    var result: [(String, Double)] = []
    for part in line.split(separator: "|") {
        let words = part.split(separator: " ").map(String.init)
        guard let stateIndex = words.firstIndex(where: { ["PLAYING", "PAUSED", "BUFFERING", "STOPPED", "ENDED"].contains($0) })
        else { return nil }
        let time = words.dropFirst(stateIndex + 1).first?.split(separator: "/").first.map(String.init) ?? ""
        let fields = time.split(separator: ":").compactMap { Double($0) }
        let seconds = fields.count == 3 ? fields[0] * 3600 + fields[1] * 60 + fields[2] : -1
        result.append((words[stateIndex], seconds))
    }
    return result
}
