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

    /// The stage cancels a seek superseded by a newer one. When the cancelled seek was the one waiting in the queue
    /// and the newer one had merged into it, the cancelled caller still ran the merged seek, and whenever its
    /// cancellation ended one of that seek's waits (a PLAYING view settling after ASYNC_DONE), the newer caller got
    /// its CancellationError: "error: view N: seek T: CancellationError()" on all four views in the soak-seek-race.
    /// That wait is a matter of timing; what is checked here is the hand-over that removes it: a cancelled caller
    /// does not run the seek (old code: it did, and reported success), the caller merged into it does, to its
    /// target. An HLS view over a slow link, playing, so the seek has waits to end.
    func testACancelledSeekDoesNotFailTheSeekMergedIntoIt() async throws {
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root, rate: "2M")
        defer { server.stop() }
        let player = try makePlayer()
        try await player.load(MediaSource(server.uri("angle1/master.m3u8")))
        // Playing: after a seek's ASYNC_DONE the pipeline still has its way back to PLAYING pending, and the player
        // waits for that (where a cancelled caller's wait ends).
        try await player.play()
        let (release, released) = AsyncStream<Void>.makeStream()
        let holder = Task { try await player.exclusively { for await _ in release {} } }
        let held = await eventually { await player.operations.isBusy }
        XCTAssertTrue(held, "the holding operation never got the queue")

        let superseded = Task { try await player.seekLocally(to: .seconds(5)) }
        let queued = await eventually { await player.operations.queuedSeekTarget?.position == .seconds(5) }
        XCTAssertTrue(queued, "the first seek is not waiting in the queue")
        let newest = Task { try await player.seekLocally(to: .seconds(12)) }
        let merged = await eventually { await player.operations.queuedSeekTarget?.merged == 1 }
        XCTAssertTrue(merged, "the second seek did not merge into the waiting one")
        superseded.cancel()

        released.finish()
        try await holder.value
        let cancelledOutcome = await superseded.result
        XCTAssertThrowsError(try cancelledOutcome.get(), "the cancelled seek reported success") { error in
            XCTAssertTrue(error is CancellationError, "the cancelled seek failed otherwise: \(error)")
        }
        do {
            try await newest.value
        } catch {
            XCTFail("the seek merged into a cancelled one failed: \(error)")
        }
        let position = try XCTUnwrap(player.queryPosition()).seconds
        XCTAssertEqual(position, 12, accuracy: 0.5, "the newest seek did not land")
        let busy = await player.operations.isBusy
        XCTAssertFalse(busy, "the queue was not released")
        await player.stop()
    }
}
