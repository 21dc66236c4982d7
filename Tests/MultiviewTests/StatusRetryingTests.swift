import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// A failed view the observer retries (an HLS server outage) says RETRYING in the status, not FAILED; a failure's
/// text is one line of its own, never in the status line. Real pipelines.
final class StatusRetryingTests: XCTestCase {
    /// Retries the views `retried` says (as the priority manager does while an HLS view's server is down).
    private struct RetryingObserver: StageViewObserver {
        var retried: @Sendable (Int) -> Bool = { $0 == 2 }
        func attach(_ player: Player, source: MediaSource, tileWidth: Int?, tileHeight: Int?) async {}
        func label(forView number: Int) async -> String? { nil }
        func perform(_ command: StageCommand) async -> String { "" }
        func refine(_ failure: PlayerError) async -> PlayerError {
            PlayerError(view: failure.view, cause: .network("server not answering — retrying until the server is back"))
        }
        func isRetrying(view number: Int) async -> Bool { retried(number) }
    }

    /// A view being retried is not done: a stage whose every view is retried (an HLS server down at a loop's
    /// restart) runs on, and ends once the retry gives up. It ended at once, with the views it said would return.
    func testAStageWhoseOnlyViewIsRetriedRunsUntilTheRetryGivesUp() async throws {
        let reporter = RecordingReporter()
        var configuration = StageConfiguration(sources: [MediaSource("/nonexistent/gone.mp4")], headless: true,
                                               duration: 30, audio: .fakeSink, statusInterval: .milliseconds(250))
        let start = ContinuousClock.now
        let until = start + .seconds(3)   // then it gives up, as the priority manager does when its patience runs out
        configuration.observer = RetryingObserver { _ in ContinuousClock.now < until }
        let outcome = await Stage(configuration: configuration, reporter: reporter).run()
        let elapsed = (ContinuousClock.now - start).inSeconds
        XCTAssertGreaterThanOrEqual(elapsed, 3, "the stage ended while its only view was being retried")
        XCTAssertLessThan(elapsed, 20, "the retry gave up at 3 s: the view was done, and so was the stage")
        XCTAssertEqual(outcome.failures.map(\.view.number), [1])
        XCTAssertTrue(reporter.statusLines.contains { $0.hasSuffix("1 gone.mp4 RETRYING") }, "\(reporter.statusLines)")
        XCTAssertTrue(reporter.statusLines.last?.hasSuffix("1 gone.mp4 FAILED") == true, "\(reporter.statusLines.suffix(3))")
    }

    func testARetriedViewSaysRetryingAndItsErrorStaysOutOfTheStatus() async throws {
        let reporter = RecordingReporter()
        var configuration = StageConfiguration(sources: [TestMedia.angle1, "/nonexistent/gone.mp4"].map(MediaSource.init),
                                               headless: true, duration: 2.5, audio: .fakeSink,
                                               statusInterval: .milliseconds(250))
        configuration.observer = RetryingObserver()
        let outcome = await Stage(configuration: configuration, reporter: reporter).run()
        XCTAssertEqual(outcome.played, [1])
        let last = try XCTUnwrap(reporter.statusLines.last)
        XCTAssertTrue(last.contains("1 angle1-wide.mp4 PLAYING"), last)
        XCTAssertTrue(last.hasSuffix("| 2 gone.mp4 RETRYING"), last)
        XCTAssertFalse(reporter.statusLines.joined().contains("server not answering"), last)
    }

    /// In the window, the failed view's tile says RETRYING too (it said FAILED while the status said RETRYING).
    func testARetriedViewsTileSaysRetrying() async throws {
        let reporter = RecordingReporter()
        var configuration = StageConfiguration(sources: [TestMedia.angle1, "/nonexistent/gone.mp4"].map(MediaSource.init),
                                               headless: false, duration: 2.5, audio: .fakeSink,
                                               statusInterval: .milliseconds(250))
        configuration.observer = RetryingObserver()
        let stage = Stage(configuration: configuration, reporter: reporter)
        let outcome = await stage.run()
        XCTAssertTrue(outcome.usedWindow, "no window: is DISPLAY reachable (Scripts/test starts Xvfb)?")
        let gridWindow = await stage.gridWindow
        let window = try XCTUnwrap(gridWindow)
        let message = try XCTUnwrap(window.message(tile: 1), "view 2's tile shows no note")
        XCTAssertTrue(message.contains("RETRYING: "), message)
        XCTAssertFalse(message.contains("FAILED"), message)
        XCTAssertNil(window.message(tile: 0), "view 1 plays: its tile has no note")
    }

    /// The CLI: the failure is an error line when it happens (and the end's summary line); the status only says
    /// FAILED.
    func testTheCLIPrintsAFailureOnceAsItsOwnLine() throws {
        let binary = TestMedia.root.appendingPathComponent(".build/debug/multiview").path
        // 6 s: view 1 must have played (a view that never played gets a failure line of its own), under load too.
        let result = try runTool(binary, ["play", "--headless", "--no-audio", "--duration", "6", TestMedia.angle1,
                                          "/nonexistent/x.mkv"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stderr.components(separatedBy: "error: view 2 (x.mkv): file not found: /nonexistent/x.mkv\n").count - 1,
                       1, result.stderr)
        XCTAssertTrue(result.stderr.hasSuffix("\nview 2 (x.mkv): file not found: /nonexistent/x.mkv\n"), result.stderr)
        XCTAssertFalse(result.stdout.contains("not found"), result.stdout)
        XCTAssertTrue(result.stdout.split(separator: "\n").last?.hasSuffix("| 2 x.mkv FAILED") == true, result.stdout)
    }
}
