import Clocks
import Coordination
import GStreamer
import XCTest

/// Issue 15's soak: an HLS view whose video starved for 0.5-0.7 s (its pipeline kept playing on the group's clock
/// and base time) was suspended for `stallRecovery`, and the end of that suspension re-sought it: a preparation of
/// 1-1.5 s, then a lead of twice that, so 3-5 s of not playing for a view that was aligned all along. A participant
/// that played its last start's timeline without a break, on a group that did not move, rejoins as it plays.
/// Fakes and a test clock: no pipeline, no daemon.
final class StallRejoinTests: XCTestCase {
    /// a and b play together; b stalls (suspended for stallRecovery) for 0.7 s and comes back; a seeks the group
    /// meanwhile when `groupMoves`.
    private func stallAndReturn(keepsTimeline: Bool, groupMoves: Bool = false) async throws -> (FakeGroup, FakeTarget) {
        var group = FakeGroup()
        try await group.add("a")
        let b = try await group.add("b")
        try await group.coordinators[0].coordinatePlay()
        await group.clock.advance(by: .seconds(2))
        XCTAssertEqual(b.buffers.count, 1, "b prepared for the group's start: \(b.buffers)")
        b.keepsTimeline(keepsTimeline)
        let stall = await group.coordinators[1].beginSuspension(for: .stallRecovery)
        await group.clock.advance(by: .milliseconds(700))
        if groupMoves { _ = try await group.coordinators[0].coordinate(.seek(to: .seconds(10))) }
        try await stall.end()
        return (group, b)
    }

    func testAParticipantStillOnTheGroupsTimelineRejoinsWithoutBeingPreparedAgain() async throws {
        let (group, b) = try await stallAndReturn(keepsTimeline: true)
        XCTAssertEqual(b.buffers.count, 1, "b was prepared again after its stall: \(b.buffers)")
        XCTAssertEqual(b.startedAt.count, 1, "b was started again at \(b.startedAt)")
        let ready = await group.medium.participants().map(\.isReady)
        XCTAssertEqual(ready, [true, true], "b takes part in the group's commands again")
    }

    func testAParticipantWhoseTimelineBrokeIsCaughtUp() async throws {
        let (_, b) = try await stallAndReturn(keepsTimeline: false)
        XCTAssertEqual(b.buffers.count, 2, "b (paused or sought during its stall) must be caught up: \(b.buffers)")
        XCTAssertEqual(b.startedAt.count, 2, "b started at \(b.startedAt)")
    }

    func testAParticipantIsCaughtUpWhenTheGroupMovedDuringItsStall() async throws {
        let (_, b) = try await stallAndReturn(keepsTimeline: true, groupMoves: true)
        XCTAssertEqual(b.buffers.count, 2, "the group sought while b stalled: b must join the new timeline: \(b.buffers)")
        XCTAssertGreaterThanOrEqual(b.buffers.last ?? .zero, .seconds(10), "b joins where the group went: \(b.buffers)")
    }

    func testPlaysOnIsTheGroupsLineAtTheSameRate() {
        let group = GroupState(itemIdentifier: "event", rate: 1, isPlaying: true, anchorMedia: .seconds(2),
                               anchorClock: .seconds(1000))
        let onLine = PlayedTimeline(itemTime: .seconds(5), rate: 1, clockTime: .seconds(1003))
        XCTAssertTrue(CatchUpPlanner.playsOn(group, timeline: onLine))
        XCTAssertFalse(CatchUpPlanner.playsOn(group, timeline: nil), "a broken timeline")
        var late = onLine
        late.clockTime = .seconds(1003.001)
        XCTAssertFalse(CatchUpPlanner.playsOn(group, timeline: late), "1 ms off the group's line")
        var faster = onLine
        faster.rate = 2
        XCTAssertFalse(CatchUpPlanner.playsOn(group, timeline: faster), "another rate")
        var paused = group
        paused.isPlaying = false
        paused.anchorClock = nil
        XCTAssertFalse(CatchUpPlanner.playsOn(paused, timeline: onLine), "a paused group is joined by preparing")
    }
}
