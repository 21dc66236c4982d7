import Foundation
import GStreamer
import Multiview
import Priority
import TestSupport
import XCTest

/// The priority manager inside a headless Stage: labels in the status line, `priority N level` from stdin,
/// a failed HLS view explained in its error line while the other plays on.
final class StageIntegrationTests: XCTestCase {
    final class Reporter: StageReporter, @unchecked Sendable {
        // Sendable: all access under `lock`.
        private let lock = NSLock()
        private var _status: [String] = [], _notes: [String] = []
        func status(_ line: String) { lock.withLock { _status.append(line) } }
        func note(_ line: String) { lock.withLock { _notes.append(line) } }
        var statusLines: [String] { lock.withLock { _status } }
        var notes: [String] { lock.withLock { _notes } }
    }

    func testHLSViewsAreNamedAfterTheirFolder() {
        XCTAssertEqual(MediaSource("http://127.0.0.1:8080/angle1/master.m3u8").displayName, "angle1/master.m3u8")
        XCTAssertEqual(MediaSource("http://127.0.0.1:8080/clip.mp4").displayName, "clip.mp4")
    }

    func testPriorityCommandParsing() {
        XCTAssertEqual(StageCommand.parse("priority 2 high"), .priority(view: 2, level: "high"))
        XCTAssertEqual(StageCommand.parse("priority 1 LOW"), .priority(view: 1, level: "low"))
        XCTAssertNil(StageCommand.parse("priority x high"))
        XCTAssertNil(StageCommand.parse("priority 0 high"))
        XCTAssertNil(StageCommand.parse("priority 2"))
    }

    func testStatusLineShowsPriorityAndRungAndStdinChangesPriority() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let root = try TemporaryDirectory.hlsWebRoot()
        try FileManager.default.createDirectory(atPath: root.path("broken"), withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=700000,RESOLUTION=640x360\ngone/index.m3u8\n"
            .write(toFile: root.path("broken/master.m3u8"), atomically: true, encoding: .utf8)
        let server = try HLSServer(root: root.url.path, rate: "8M")
        defer { server.stop() }
        var configuration = StageConfiguration(
            sources: [MediaSource(server.uri("angle1/master.m3u8")), MediaSource(server.uri("angle2/master.m3u8")),
                      MediaSource(server.uri("broken/master.m3u8")),
                      MediaSource(repoRoot.appendingPathComponent("Media/angle4-overhead.mp4").path)],
            headless: true, duration: 40, audio: .fakeSink)   // a cap only: the test quits once it has seen enough
        let manager = PriorityManager(budget: 8_000_000)
        configuration.observer = PriorityStageObserver(manager: manager, initialPriorities: [1: .high, 2: .low])
        let reporter = Reporter()
        let stage = Stage(configuration: configuration, reporter: reporter)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        // Once the status shows view 1 high on its top rung and views 2 (low) and 4 playing, the priorities change
        // by stdin; once both commands are answered, quit (events, not a 6 s sleep and a 12 s run).
        let driver = Task {
            let labelled = await eventually(timeout: .seconds(20)) {
                let lines = reporter.statusLines
                return lines.contains { $0.contains("[high 1920x1080") }
                    && lines.contains { $0.contains("| 2 angle2/master.m3u8 PLAYING") && $0.contains("[low ") }
                    && lines.contains { $0.contains("4 angle4-overhead.mp4 PLAYING") }
            }
            input.yield(.priority(view: 2, level: "high"))
            input.yield(.priority(view: 1, level: "sideways"))
            let answered = await eventually(timeout: .seconds(10)) {
                let notes = reporter.notes
                return notes.contains { $0.hasPrefix("view 2 priority high") }
                    && notes.contains("priority: 'sideways' is not low, default or high")
            }
            input.yield(.quit)
            return (labelled, answered)
        }
        let outcome = await stage.run(commands: commands)
        input.finish()
        let (labelled, answered) = await driver.value
        XCTAssertTrue(labelled, "the status never showed view 1 high at 1080p with views 2 and 4 playing: \(reporter.statusLines.suffix(3))")
        XCTAssertTrue(answered, "the priority commands were not answered: \(reporter.notes)")

        let lines = reporter.statusLines
        XCTAssertTrue(lines.contains { $0.contains("[high 1920x1080") }, "no high/1080p label: \(lines.suffix(3))")
        XCTAssertTrue(lines.contains { $0.contains("| 2 angle2/master.m3u8 PLAYING") && $0.contains("[low ") },
                      "no low label for view 2: \(lines.suffix(3))")
        let notes = reporter.notes
        XCTAssertTrue(notes.contains("view 2 priority high, cap 1920x1080 5.5M") || notes.contains { $0.hasPrefix("view 2 priority high") },
                      "\(notes)")
        XCTAssertTrue(notes.contains("priority: 'sideways' is not low, default or high"), "\(notes)")
        let priority2 = await manager.priority(ofView: 2)
        XCTAssertEqual(priority2, .high)
        // The broken view fails alone, with the missing variant named; the others played.
        XCTAssertEqual(outcome.failures.count, 1)
        let failure = outcome.failures.first?.description ?? ""
        XCTAssertTrue(failure.hasPrefix("view 3 (broken/master.m3u8): network error: variant gone/index.m3u8: HTTP 404"), failure)
        XCTAssertEqual(outcome.played, [1, 2, 4])
        // A local file mixed in plays like before, with no priority label (it has no rungs).
        let fileEntries = lines.compactMap { $0.components(separatedBy: " | ").first { $0.hasPrefix("4 angle4-overhead.mp4 PLAYING") } }
        XCTAssertFalse(fileEntries.isEmpty, "\(lines.suffix(2))")
        XCTAssertFalse(fileEntries.contains { $0.contains("[") }, "\(fileEntries.suffix(1))")
    }
}
