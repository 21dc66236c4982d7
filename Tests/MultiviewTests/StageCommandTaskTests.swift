import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Commands run as tasks of their own on a real headless stage: a command stuck in a layer never holds the status
/// line, the other views or `q`; a newer absolute seek supersedes an older one; numbers out of range are refused.
final class StageCommandTaskTests: XCTestCase {
    /// A trick-play layer whose start never answers (ignoring cancellation for 30 s), like a view stuck in a seek.
    private struct StuckTrickPlay: StageTrickPlay {
        func start(_ player: Player, source: MediaSource, rate: Double, from position: Double) async -> StageTrickPlayStart {
            let until = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < until { try? await Task.sleep(for: .milliseconds(50)) }
            return .refused("gave up")
        }
        func stop(view number: Int) async -> Double? { nil }
        func preview(_ player: Player, source: MediaSource, seconds: Double, path: String) async -> String { "" }
    }

    /// Before: the stage awaited each command in its one input loop, so `ff 1` stuck here held every later input.
    func testAStuckCommandHoldsNeitherStatusNorOtherCommandsNorQuit() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        var configuration = StageConfiguration(sources: Array(TestMedia.angles.prefix(2)).map(MediaSource.init),
                                               headless: true, audio: .fakeSink, statusInterval: .seconds(60))
        configuration.trickPlay = StuckTrickPlay()
        let reporter = RecordingReporter()
        let stage = Stage(configuration: configuration, reporter: reporter)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let finished = Finished()
        let run = Task {
            let outcome = await stage.run(commands: commands)
            await finished.set()
            return outcome
        }
        let playing = await eventually(timeout: .seconds(20)) { await stage.hasPlaying(views: 2) }
        XCTAssertTrue(playing)
        input.yield(.trickPlay(view: 1, rate: 8))
        let statusLines = reporter.statusLines.count
        input.yield(.status)
        let statusCame = await eventually(timeout: .seconds(2)) { reporter.statusLines.count > statusLines }
        XCTAssertTrue(statusCame, "the status line came while `ff 1` was stuck")
        input.yield(.seekTo(12))
        let seeked = await eventually(timeout: .seconds(10)) { reporter.notes.contains("seek 12: done") }
        XCTAssertTrue(seeked, "both views seeked while view 1's trick play was stuck: \(reporter.notes)")
        for player in await stage.currentPlayers {
            XCTAssertGreaterThanOrEqual(player.queryPosition()?.seconds ?? 0, 11.9, "\(player.view)")
        }
        input.yield(.rate(100))
        input.yield(.whatHappened(5))
        let refused = await eventually(timeout: .seconds(2)) {
            reporter.notes.contains { $0.hasPrefix("r 5: no view 5; views are 1…2") }
        }
        XCTAssertTrue(refused, "\(reporter.notes)")
        let quitSent = ContinuousClock.now
        input.yield(.quit)
        let ended = await eventually(timeout: .seconds(3)) { await finished.value }
        XCTAssertTrue(ended, "quit while `ff 1` was stuck")
        XCTAssertLessThan(ContinuousClock.now - quitSent, .seconds(3))
        run.cancel()
        input.finish()
    }

    /// `seek 5` then `seek 15` at once: the newer absolute seek wins and reports; every view ends near 15 s.
    func testANewerAbsoluteSeekSupersedesTheOlder() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let reporter = RecordingReporter()
        let stage = Stage(configuration: StageConfiguration(
            sources: Array(TestMedia.angles.prefix(2)).map(MediaSource.init), headless: true, duration: 8,
            audio: .fakeSink), reporter: reporter)
        let running = await startStage(stage, views: 2)
        let input = running.input, run = running.run
        input.yield(.seekTo(5))
        input.yield(.seekTo(15))
        let done = await eventually(timeout: .seconds(10)) { reporter.notes.contains("seek 15: done") }
        XCTAssertTrue(done, "\(reporter.notes)")
        for player in await stage.currentPlayers {
            let position = player.queryPosition()?.seconds ?? 0
            XCTAssertGreaterThanOrEqual(position, 14.9, "\(player.view) went to the newer target")
            XCTAssertLessThan(position, 18, "\(player.view)")
        }
        input.yield(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0)
        input.finish()
    }

    /// The stage refuses a duration it cannot wait (it crashed converting it): one line, the run ends.
    func testAnUnrepresentableDurationIsOneLineNotACrash() async {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let reporter = RecordingReporter()
        let stage = Stage(configuration: StageConfiguration(sources: [MediaSource(TestMedia.angle1)], headless: true,
                                                            duration: 1e18, audio: .fakeSink), reporter: reporter)
        let outcome = await stage.run()
        XCTAssertEqual(outcome.exitCode, 1)
        XCTAssertEqual(reporter.notes.filter { $0.hasPrefix("duration 1e+18: out of range") }.count, 1, "\(reporter.notes)")
    }
}

/// Whether the run has returned.
private actor Finished {
    private(set) var value = false
    func set() { value = true }
}
