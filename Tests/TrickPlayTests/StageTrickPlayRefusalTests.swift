import Foundation
import GStreamer
import Multiview
import TestSupport
import TrickPlay
import XCTest

/// Issue 15 row 10: `ff 1` on a local file said trick play needs HLS and left the view paused; the README says it
/// keeps playing.
final class StageTrickPlayRefusalTests: XCTestCase {
    func testFastForwardOnALocalFileKeepsTheViewPlaying() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        var configuration = StageConfiguration(
            sources: [MediaSource(repoRoot.appendingPathComponent("Media/angle4-overhead.mp4").path)],
            headless: true, audio: .fakeSink)
        let reporter = StageTrickPlayTests.Reporter()
        configuration.trickPlay = TrickPlayStage(note: { reporter.note($0) })
        let stage = Stage(configuration: configuration, reporter: reporter)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let run = Task { await stage.run(commands: commands) }
        let playing = await eventually(timeout: .seconds(20)) {
            guard let player = await stage.currentPlayers.first else { return false }
            return await player.currentStatus.state == .playing
        }
        XCTAssertTrue(playing)
        input.yield(.trickPlay(view: 1, rate: 8))
        let refused = await eventually(timeout: .seconds(5)) {
            reporter.notes.contains { $0.hasPrefix("view 1: trick play needs an HLS master playlist") }
        }
        XCTAssertTrue(refused, "\(reporter.notes)")
        let player = try await XCTUnwrapAsync(await stage.currentPlayers.first)
        let before = player.queryPosition()?.seconds ?? 0
        let movedOn = await eventually(timeout: .seconds(6)) {
            let state = await player.currentStatus.state
            return state == .playing && (player.queryPosition()?.seconds ?? 0) > before + 1.5
        }
        let state = await player.currentStatus.state
        XCTAssertTrue(movedOn, "the view kept playing after the refusal (from \(before) s, now \(player.queryPosition()?.seconds ?? -1) s, \(state))")
        input.yield(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0)
        input.finish()
    }
}

private func XCTUnwrapAsync<T>(_ value: @autoclosure () async -> T?, file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    let resolved = await value()
    return try XCTUnwrap(resolved, file: file, line: line)
}
