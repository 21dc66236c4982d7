import Foundation
import TestSupport
import XCTest

/// The built `multiview` binary given bad numbers, commands past the end, signals and failing views (issue 15 rows
/// 6, 8, 9, 11): one line naming the value and the allowed range, and a process that always ends.
final class StageCLITests: XCTestCase {
    private var binary: String { TestMedia.root.appendingPathComponent(".build/debug/multiview").path }

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            XCTFail("\(binary) not built: run `swift build` (Scripts/test does)")
            throw CancellationError()
        }
    }

    /// Row 6: these crashed with "Double value cannot be converted to Int" (exit 132).
    func testHugeOrNonFiniteDurationsAreOneLineNotACrash() throws {
        for value in ["1e18", "nan", "inf", "1e309", "0"] {
            let result = try runTool(binary, ["play", "--headless", "--no-audio", "--duration", value, TestMedia.angle1])
            XCTAssertEqual(result.status, 64, "--duration \(value): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, result.stderr)
            XCTAssertTrue(lines.first?.hasPrefix("error: --duration \(value): ") == true, result.stderr)
            XCTAssertTrue(result.stderr.contains("at most 604800 s"), result.stderr)
        }
        let tile = try runTool(binary, ["play", "--headless", "--tile", "100000x270", TestMedia.angle1])
        XCTAssertEqual(tile.status, 64)
        XCTAssertTrue(tile.stderr.hasPrefix("error: --tile 100000x270: out of range; allowed: WIDTHxHEIGHT with width 16…7680"), tile.stderr)
        let priority = try runTool(binary, ["play", "--headless", "--priority", "3=high", TestMedia.angle1, TestMedia.angles[1]])
        XCTAssertEqual(priority.status, 64)
        XCTAssertEqual(priority.stderr, "error: --priority 3=high: no view 3; views are 1…2\n")
    }

    /// Row 8: coordinated, `seek 42.5` on 24 s media ended the process at once with status 0 and no message;
    /// uncoordinated it printed "done" and did nothing. Now both refuse it with the same line and play on.
    func testSeekPastTheEndIsRefusedTheSameCoordinatedOrNot() throws {
        // Both players at once (each waits out its 6 s).
        let start = ContinuousClock.now
        let modes = [true, false]
        let results = runToolsAtOnce(modes.map { coordinated in
            // 6 s: long enough for both views to play under the shards' load (see StageTests' failed-view run).
            ([binary, "play", "--headless", "--no-audio", "--duration", "6"]
                + (coordinated ? ["--coordinated"] : []) + Array(TestMedia.angles.prefix(2)), "seek 42.5\n")
        })
        for (coordinated, outcome) in zip(modes, results) {
            let result = try outcome.get()
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("error: seek 42.5: past the end of the media; allowed: 0…24.0 s (nothing moved)"),
                          "coordinated \(coordinated): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("seek 42.5: done"), result.stderr)
            XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .seconds(6), "played to --duration")
            assertEveryViewPlaysAtTheEnd(result.stdout, views: 2, "coordinated \(coordinated), both views still playing: "
                                         + "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        }
    }

    /// Row 11: `rate 100` was accepted (and froze the views). Now: one line with the range; `rate 2` still works.
    func testRatesOutOfRangeAreRefusedWithTheRange() throws {
        let result = try runTool(binary, ["play", "--headless", "--no-audio", "--duration", "6", TestMedia.angle1],
                                 stdin: "rate 100\nrate nan\nr 4\nrate 2\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("error: rate 100: out of range; allowed: 0.125…8 (1/8× to 8×"), result.stderr)
        XCTAssertTrue(result.stderr.contains("error: rate nan: not a finite number; allowed: 0.125…8"), result.stderr)
        XCTAssertTrue(result.stderr.contains("error: r 4: no view 4; views are 1…1"), result.stderr)
        XCTAssertTrue(result.stderr.contains("note: rate 2: done"), result.stderr)
        XCTAssertFalse(result.stderr.contains("rate(100.0)"), result.stderr)
    }

    /// Row 9: SIGINT / SIGTERM with a failed view exited at once without the per-failed-view line. Now the line
    /// comes first, the process ends within 2 s with 130 / 143; a second SIGINT ends it at once.
    func testSignalsPrintTheFailedViewLinesAndEndWithinTwoSeconds() throws {
        for (signal, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            let tool = try RunningTool([binary, "play", "--headless", "--no-audio", TestMedia.angle1, "/nonexistent/x.mkv"])
            defer { tool.kill() }
            XCTAssertTrue(tool.waitForOutput(timeout: .seconds(20)) { $0.contains("1 angle1-wide.mp4 PLAYING") && $0.contains("FAILED") },
                          "never playing: \(tool.stdout)\n\(tool.stderr)")
            let sent = ContinuousClock.now
            tool.signal(signal)
            let status = try XCTUnwrap(tool.waitForExit(timeout: .seconds(2)), "still running 2 s after signal \(signal)")
            XCTAssertLessThan(ContinuousClock.now - sent, .seconds(2))
            XCTAssertEqual(status, code)
            XCTAssertTrue(tool.stderr.contains("\nview 2 (x.mkv): file not found: /nonexistent/x.mkv\n"), tool.stderr)
        }
        let tool = try RunningTool([binary, "play", "--headless", "--no-audio", TestMedia.angle1, "/nonexistent/x.mkv"])
        defer { tool.kill() }
        XCTAssertTrue(tool.waitForOutput(timeout: .seconds(20)) { $0.contains("PLAYING") })
        tool.signal(SIGINT)
        tool.signal(SIGINT)
        XCTAssertEqual(try XCTUnwrap(tool.waitForExit(timeout: .seconds(1)), "a second SIGINT ends at once"), 130)
        XCTAssertTrue(tool.stderr.contains("view 2 (x.mkv): file not found"), tool.stderr)
    }

    /// Row 7: two files and a garbage `.m3u8` over HTTP with `--duration`: now and then the process never exited (a
    /// thread stuck in adaptivedemux2's teardown). The views are left to the process's exit and a watchdog ends it
    /// at the latest 1.9 s after the stage ends: three runs (at once), each ends with one line for the garbage view.
    func testAGarbagePlaylistOverHTTPNeverHoldsTheExit() throws {
        let root = try TemporaryDirectory(prefix: "garbage-hls")
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: URL(fileURLWithPath: root.path("garbage.m3u8")))
        let server = try HLSServer(root: root.url.path)
        defer { server.stop() }
        // The three runs at once: a stuck teardown would hold its own process, whatever the others do.
        let start = ContinuousClock.now
        let results = runToolsAtOnce(Array(repeating: ([binary, "play", "--headless", "--no-audio", "--duration", "3",
                                                        TestMedia.angle1, TestMedia.angles[1], server.uri("garbage.m3u8")], nil),
                                           count: 3), timeout: .seconds(30))
        for (run, outcome) in zip(1..., results) {
            let result = try outcome.get()
            XCTAssertEqual(result.status, 1, "run \(run): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("view 3 (garbage.m3u8): ") }
            XCTAssertEqual(lines.count, 1, "run \(run): \(result.stderr)")
            XCTAssertLessThan(ContinuousClock.now - start, .seconds(20), "run \(run)")
        }
    }
}

/// A program kept running so that a test can signal it: output to files (see Processes.swift for why not pipes).
final class RunningTool {
    let pid: pid_t
    private let directory: URL
    private var exitStatus: Int32?

    init(_ arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mv-running-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory.appendingPathComponent("stdout").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory.appendingPathComponent("stderr").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestFailure("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    var stdout: String { (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

    /// Polls the standard output until `condition` holds or `timeout` passes.
    func waitForOutput(timeout: Duration, _ condition: (String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(stdout) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition(stdout)
    }

    func signal(_ number: Int32) { Foundation.kill(pid, number) }

    /// The exit status (128 + signal when a signal ended it), or nil if it still runs after `timeout`.
    func waitForExit(timeout: Duration) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let waited = waitpid(pid, &status, WNOHANG)
            if waited == pid {
                exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                return exitStatus
            }
            if ContinuousClock.now > deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Ends it (SIGKILL) if it still runs.
    func kill() {
        guard exitStatus == nil else { return }
        Foundation.kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        exitStatus = 128 + SIGKILL
    }
}
