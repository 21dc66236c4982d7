import Coordination
import GStreamer
import XCTest

/// Who takes part, what a rejoin does, and when a suspension holds the group. Pure: no pipeline, no daemon.
final class GroupRosterTests: XCTestCase {
    private let a = ParticipantID("a"), b = ParticipantID("b"), c = ParticipantID("c")
    private let playing = GroupState(itemIdentifier: "event", rate: 2, isPlaying: true, anchorMedia: .seconds(10),
                                     anchorClock: .seconds(100))

    private func roster() throws -> GroupRoster {
        var roster = GroupRoster()
        try roster.add(b, item: "event")
        try roster.add(a, item: "event")
        try roster.add(c, item: "other")
        return roster
    }

    func testTheSameIdTwiceIsRefused() throws {
        var roster = try roster()
        XCTAssertThrowsError(try roster.add(a, item: "event")) { error in
            XCTAssertEqual(error as? CoordinationError, .duplicateParticipant(a))
        }
    }

    func testASuspendedParticipantIsSkippedButStillHearsTheGroup() throws {
        var roster = try roster()
        XCTAssertEqual(roster.eligible(for: "event"), [a, b], "same item only, by id")
        roster.setReady([a, b], true)
        roster.setSuspensions(b, [.stallRecovery])
        XCTAssertEqual(roster.eligible(for: "event"), [a])
        XCTAssertEqual(roster.members(of: "event"), [a, b])
        XCTAssertEqual(roster[b]?.isReady, false, "a suspended participant is not ready")
        XCTAssertEqual(roster.participants().map(\.suspensionReasons), [[], [.stallRecovery], []])
        roster.setSuspensions(b, [])
        XCTAssertEqual(roster.eligible(for: "event"), [a, b])
    }

    func testAParticipantLeftBehindIsSkippedShownAsSuchAndCaughtUpByARejoin() throws {
        var roster = try roster()
        roster.setReady([a, b], true)
        roster.leaveBehind([b])
        XCTAssertEqual(roster.eligible(for: "event"), [a], "a participant left behind took part")
        XCTAssertEqual(roster.members(of: "event"), [a, b])
        XCTAssertEqual(roster[b]?.isReady, false)
        XCTAssertEqual(roster.leftBehind(of: "event"), [b])
        XCTAssertEqual(roster.participants().map(\.suspensionReasons), [[], [.coordinatedPlaybackNotPossible], []])
        XCTAssertEqual(roster.rejoinPlan(for: b, group: playing), .catchUp)
        // Suspended on its own as well: its suspension's end rejoins it, not the medium.
        roster.setSuspensions(b, [.stallRecovery])
        XCTAssertEqual(roster.leftBehind(of: "event"), [])
        XCTAssertEqual(roster.rejoinPlan(for: b, group: playing), .nothing)
        roster.setSuspensions(b, [])
        roster.caughtUp(b)
        XCTAssertEqual(roster.eligible(for: "event"), [a, b])
        XCTAssertEqual(roster[b]?.isReady, true)
        XCTAssertEqual(roster.participants().map(\.suspensionReasons), [[], [], []])
        XCTAssertEqual(roster.rejoinPlan(for: b, group: playing), .nothing)
    }

    func testRejoinFoundsAGroupCatchesUpOrDoesNothing() throws {
        var roster = try roster()
        XCTAssertEqual(roster.rejoinPlan(for: a, group: nil), .foundGroup)
        XCTAssertEqual(roster.rejoinPlan(for: a, group: playing), .catchUp)
        roster.setReady([a], true)
        XCTAssertEqual(roster.rejoinPlan(for: a, group: playing), .nothing, "already started by a barrier")
        var paused = playing
        paused.isPlaying = false
        XCTAssertEqual(roster.rejoinPlan(for: a, group: paused), .catchUp, "ready but the group is paused: join it")
        roster.setSuspensions(a, [.whatHappened])
        XCTAssertEqual(roster.rejoinPlan(for: a, group: playing), .nothing, "suspended: it rejoins when that ends")
        XCTAssertNil(roster.rejoinPlan(for: ParticipantID("nobody"), group: playing))
        roster.setItem(b, "other")
        XCTAssertEqual(roster.members(of: "other"), [b, c])
    }

    func testASuspensionOthersWaitForHoldsTheGroupAndTheLastReturnResumesItsRate() {
        XCTAssertTrue(WaitingHold.triggersWaiting([.stallRecovery], waitedForByOthers: [[], [.stallRecovery]]))
        XCTAssertFalse(WaitingHold.triggersWaiting([.whatHappened], waitedForByOthers: [[.stallRecovery]]))

        var hold = WaitingHold()
        let decision = hold.suspensionsChanged(of: a, triggersWaiting: true, group: playing, now: .seconds(101))
        var held = playing
        held.isPlaying = false
        held.anchorMedia = .seconds(12)
        held.anchorClock = nil
        XCTAssertEqual(decision, .hold(held), "paused where the group was when it began")
        XCTAssertTrue(hold.isHolding)
        // A second holder: already paused, nothing more to do.
        XCTAssertEqual(hold.suspensionsChanged(of: b, triggersWaiting: true, group: held, now: .seconds(102)), .none)
        XCTAssertEqual(hold.suspensionsChanged(of: a, triggersWaiting: false, group: held, now: .seconds(103)), .none,
                       "b still holds it")
        var resumed = held
        resumed.isPlaying = true
        XCTAssertEqual(hold.suspensionsChanged(of: b, triggersWaiting: false, group: held, now: .seconds(104)),
                       .resume(resumed), "resumes at ×2, the rate it had")
        XCTAssertFalse(hold.isHolding)
        XCTAssertNil(hold.resumeRate)
    }

    func testASuspensionNobodyWaitsForOrAPausedGroupNeedsNoBarrier() {
        var hold = WaitingHold()
        XCTAssertEqual(hold.suspensionsChanged(of: a, triggersWaiting: false, group: playing, now: .seconds(101)), .none)
        var paused = playing
        paused.isPlaying = false
        XCTAssertEqual(hold.suspensionsChanged(of: a, triggersWaiting: true, group: paused, now: .seconds(101)), .none)
        XCTAssertTrue(hold.isHolding, "it holds a paused group all the same: a play stays paused")
        XCTAssertEqual(hold.suspensionsChanged(of: a, triggersWaiting: false, group: paused, now: .seconds(102)), .none,
                       "it was not playing when the hold began: it is not resumed")
        hold = WaitingHold()
        _ = hold.suspensionsChanged(of: a, triggersWaiting: true, group: playing, now: .seconds(101))
        hold.remove(a)
        XCTAssertFalse(hold.isHolding, "a holder that left holds nothing")
    }

    /// What a predicted start counts on: a participant's first group command is its pipeline's first preroll and is
    /// not kept as its own measure; a catch-up's is, marked as a join's; a later command's replaces it.
    func testOwnPreparationsSkipTheFirstPrerollAndMarkACatchUps() throws {
        var roster = GroupRoster()
        let a = ParticipantID("a")
        try roster.add(a, item: "event")
        roster.notePreparation(a, own: .milliseconds(316), lastPrepare: .milliseconds(316), byCatchUp: false)
        XCTAssertNil(roster[a]?.ownPrepare, "the first preroll is no seek")
        XCTAssertEqual(roster[a]?.lastPrepare, .milliseconds(316))
        roster.notePreparation(a, own: .milliseconds(40), lastPrepare: .milliseconds(80), byCatchUp: true)
        XCTAssertEqual(roster[a]?.ownPrepare, .milliseconds(40))
        XCTAssertEqual(roster[a]?.ownPrepareFromCatchUp, true)
        XCTAssertEqual(roster[a]?.lastPrepare, .milliseconds(80))
        roster.notePreparation(a, own: .milliseconds(25), lastPrepare: nil, byCatchUp: false)
        XCTAssertEqual(roster[a]?.ownPrepare, .milliseconds(25))
        XCTAssertEqual(roster[a]?.ownPrepareFromCatchUp, false)
        XCTAssertEqual(roster[a]?.lastPrepare, .milliseconds(80), "kept when the medium did not measure it")

        let b = ParticipantID("b")
        try roster.add(b, item: "event")
        roster.notePreparation(b, own: .milliseconds(30), lastPrepare: .milliseconds(70), byCatchUp: true)
        XCTAssertEqual(roster[b]?.ownPrepare, .milliseconds(30), "a joiner's first preparation is a catch-up's: kept")
    }
}
