import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import SyncAnalysis
import TestSupport
import XCTest

/// Coordinated playback with real pipelines: one clock, everyone ready → start together, commands from any view.
final class CoordinatedPlaybackTests: XCTestCase {
    func testFourViewsStartTogetherAndStayAligned() async throws {
        let set = try await CoordinatedViews.make(Media.angles)
        // The command can come from any view: here view 3 presses play.
        try await set.players[2].play()
        let playing = await eventually { await set.statuses().allSatisfy { $0.state == .playing } }
        let statuses = await set.statuses()
        XCTAssertTrue(playing, "\(statuses)")
        _ = await eventually(timeout: .seconds(10)) { set.analysis().summary.frames > 40 }   // the frames judged below
        let result = set.analysis()
        print("skew", result.summary)
        XCTAssertGreaterThan(result.summary.frames, 40)
        XCTAssertEqual(result.summary.views, 4)
        XCTAssertLessThan(try XCTUnwrap(result.summary.p99SkewMs), 10)
        // Every pipeline runs on the medium's clock.
        for p in set.players { XCTAssertTrue(p.pipeline.pipelineClock.map { $0 === set.medium.clock } ?? false) }
    }
}

/// `multiview sync-report` as scripts use it: summary.json with the named fields, coordinated vs baseline.
final class SyncReportCLITests: XCTestCase {
    func testSyncReportWritesSummaryAndBeatsTheBaseline() throws {
        let binary = Media.root.appendingPathComponent(".build/debug/multiview").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return XCTFail("\(binary) not built") }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sync-report-\(getpid())")
        let script = out.appendingPathExtension("txt")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try "play\nwait 2\nseek +5\nwait 2\nlate join\nwait 2\nsuspend 2\nwait 2\n".write(to: script, atomically: true, encoding: .utf8)
        // Run from the repository root: with no media named, sync-report plays the bundled Media/ (the default a
        // user meets). Output goes to files (runTool), so stderr is never lost and cannot fill a pipe.
        let run = try runTool(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", Media.root.path, binary,
                               "sync-report", "--views", "3", "--script", script.path, "--out", out.path, "--baseline"],
                              timeout: .seconds(180))
        let text = run.stdout
        XCTAssertEqual(run.status, 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        XCTAssertTrue(text.contains("coordinated") && text.contains("baseline"), text)
        guard run.status == 0 else { return }

        let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("summary.json"))) as? [String: Any]
        let s = try XCTUnwrap(summary)
        for key in ["views", "frames", "p50_skew_ms", "p99_skew_ms", "max_skew_ms", "phases"] { XCTAssertNotNil(s[key], key) }
        XCTAssertEqual(s["views"] as? Int, 4, "3 views + the late joiner")
        XCTAssertGreaterThan(s["frames"] as? Int ?? 0, 150)
        let p99 = try XCTUnwrap(s["p99_skew_ms"] as? Double)
        XCTAssertLessThan(p99, 10, "coordinated views stay aligned through play, seek, late join and a suspension")
        let phases = try XCTUnwrap(s["phases"] as? [[String: Any]])
        XCTAssertEqual(phases.map { $0["name"] as? String }, ["play", "seek +5", "late join", "suspend 2"])
        // After the suspension ended, the suspended view rejoined aligned: the phase compares all 4 views again.
        XCTAssertEqual(phases.last?["views"] as? Int, 4)
        XCTAssertLessThan(phases.last?["p99_skew_ms"] as? Double ?? 99, 10)

        let base = try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("summary-baseline.json"))) as? [String: Any]
        let baseP50 = try XCTUnwrap(base?["p50_skew_ms"] as? Double)
        let p50 = try XCTUnwrap(s["p50_skew_ms"] as? Double)
        XCTAssertLessThan(p50, baseP50, "coordination beats views started one after another")
        // Each baseline view's own seek → first frame is measured (the yardstick sync-report prints next to the
        // coordinated seek's time to aligned).
        let baseSeek = try XCTUnwrap((base?["phases"] as? [[String: Any]])?.first { $0["name"] as? String == "seek +5" })
        let firstFrame = try XCTUnwrap(baseSeek["slowest_first_frame_ms"] as? Double, "\(baseSeek)")
        XCTAssertGreaterThan(firstFrame, 0)
        XCTAssertLessThan(firstFrame, 5000)
        XCTAssertTrue(text.contains("the slowest uncoordinated view's own seek"), text)
        let png = try decodePNG(atPath: out.appendingPathComponent("skew.png").path)
        XCTAssertEqual([png.width, png.height], [1000, 400])
    }
}

/// `multiview play --coordinated` driven from stdin, as a user in a terminal would.
final class CoordinatedCLITests: XCTestCase {
    func testCoordinatedPlayWithWhatHappenedAndAdd() throws {
        let binary = Media.root.appendingPathComponent(".build/debug/multiview").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return XCTFail("\(binary) not built") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["play", "--headless", "--no-audio", "--coordinated", "--duration", "10",
                             Media.angles[0], Media.angles[1]]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // "r 1" once the group has played 3 s (view 1 goes back 5 s → 0, catches up at 2×); then "add" joins a
        // third view while the group plays.
        Thread.sleep(forTimeInterval: 3)
        input.fileHandleForWriting.sendLine("r 1")
        Thread.sleep(forTimeInterval: 4)
        input.fileHandleForWriting.sendLine("add \(Media.angles[2])")
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, stderr)
        XCTAssertTrue(stderr.contains("view 1 caught up and rejoined"), stderr)
        XCTAssertTrue(stderr.contains("added view 3 (angle3-right.mkv)"), stderr)
        let last = try XCTUnwrap(stdout.split(separator: "\n").last)
        XCTAssertEqual(last.components(separatedBy: "PLAYING").count - 1, 3, String(last))
    }
}
