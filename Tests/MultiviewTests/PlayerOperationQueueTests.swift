import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// The command queue on a real pipeline: operations hold the pipeline one at a time, and seeks that wait for
/// their turn merge (newest target wins), every caller returning when the merged seek has prerolled.
final class PlayerOperationQueueTests: XCTestCase {
    func testSeeksWaitingForTheirTurnMergeAndTheNewestTargetWins() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.preroll()
        let log = await EventLog(player)
        // Hold the queue with an operation of our own until both seeks are queued.
        let (release, released) = AsyncStream<Void>.makeStream()
        let holder = Task { try await player.exclusively { for await _ in release {} } }
        let held = await eventually { await player.operations.isBusy }
        XCTAssertTrue(held, "the holding operation never got the queue")

        let first = Task { try await player.seekLocally(to: .seconds(5)) }
        let queued = await eventually { await player.operations.queuedSeekTarget?.position == .seconds(5) }
        XCTAssertTrue(queued, "the first seek is not waiting in the queue")
        let second = Task { try await player.seekLocally(to: .seconds(12)) }
        let merged = await eventually { await player.operations.queuedSeekTarget?.merged == 1 }
        XCTAssertTrue(merged, "the second seek did not merge into the waiting one")
        let target = await player.operations.queuedSeekTarget?.position
        XCTAssertEqual(target, .seconds(12), "the newest target wins")

        released.finish()
        try await holder.value
        try await first.value
        try await second.value
        let position = try XCTUnwrap(player.queryPosition()).seconds
        XCTAssertEqual(position, 12, accuracy: 0.1, "the merged seek went to the newest target")
        // The log hears of the seek through the player's event stream, after the callers returned: wait for it,
        // then give a second seek (the failure this test looks for) time to be heard too.
        let completedSeeks = {
            await log.events.compactMap { if case .seekCompleted(let p) = $0 { return p } else { return nil } }
        }
        let heard = await eventually(timeout: .seconds(5)) { !(await completedSeeks()).isEmpty }
        let events = await log.events
        XCTAssertTrue(heard, "no seekCompleted event within 5 s: \(events)")
        try await Task.sleep(for: .milliseconds(500))
        let seeks = await completedSeeks()
        XCTAssertEqual(seeks.count, 1, "one seek ran for both callers: \(seeks)")
        let busy = await player.operations.isBusy
        XCTAssertFalse(busy, "the queue was not released")
        await player.stop()
    }
}
