import Coordination
import GStreamer
import XCTest

/// Command → the group's next state and what everyone is told. Pure: no pipeline, no daemon.
final class GroupCommandPlannerTests: XCTestCase {
    private let now = ClockTime.seconds(100)
    /// Playing at ×1 since clock 98 s from media 10 s: at clock 100 s the group is at 12 s.
    private let playing = GroupState(itemIdentifier: "event", rate: 1, isPlaying: true, anchorMedia: .seconds(10),
                                     anchorClock: .seconds(98))
    private let paused = GroupState(itemIdentifier: "event", rate: 1, isPlaying: false, anchorMedia: .seconds(10),
                                    anchorClock: nil)

    func testNoGroupYetStartsPausedWhereTheProposerIs() {
        let state = GroupCommandPlanner.currentState(existing: nil, item: "event", proposerPosition: .seconds(7))
        XCTAssertEqual(state, GroupState(itemIdentifier: "event", rate: 1, isPlaying: false, anchorMedia: .seconds(7),
                                         anchorClock: nil))
        XCTAssertEqual(GroupCommandPlanner.currentState(existing: playing, item: "event", proposerPosition: .seconds(7)),
                       playing, "an existing group keeps its state")
        XCTAssertEqual(GroupCommandPlanner.currentState(existing: nil, item: "x", proposerPosition: nil).anchorMedia, .zero)
    }

    func testPauseStopsWhereTheGroupIsNow() {
        let plan = GroupCommandPlanner.plan(.pause, current: playing, now: now, held: false)
        XCTAssertEqual(plan.target.anchorMedia, .seconds(12))
        XCTAssertFalse(plan.target.isPlaying)
        XCTAssertNil(plan.target.anchorClock, "the instant is chosen when everyone is ready")
        XCTAssertEqual(plan.start, .barrier)
        XCTAssertTrue(plan.rateChanged)
        XCTAssertFalse(plan.jumped)
    }

    func testSeekKeepsPlayingAndJumps() {
        let plan = GroupCommandPlanner.plan(.seek(to: .seconds(3)), current: playing, now: now, held: false)
        XCTAssertEqual(plan.target.anchorMedia, .seconds(3))
        XCTAssertTrue(plan.target.isPlaying)
        XCTAssertTrue(plan.jumped)
        XCTAssertFalse(plan.rateChanged, "a seek changes neither rate nor playing")
    }

    func testSeekByIsRelativeToTheGroupsTimeNowAndNeverBeforeZero() {
        let forward = GroupCommandPlanner.plan(.seekBy(seconds: 5), current: playing, now: now, held: false)
        XCTAssertEqual(forward.target.anchorMedia, .seconds(17))
        let back = GroupCommandPlanner.plan(.seekBy(seconds: -30), current: playing, now: now, held: false)
        XCTAssertEqual(back.target.anchorMedia, .zero)
        XCTAssertTrue(back.jumped)
    }

    func testPlayAndRateStartThePausedGroupAtItsTime() {
        let play = GroupCommandPlanner.plan(.play(rate: 1), current: paused, now: now, held: false)
        XCTAssertTrue(play.target.isPlaying)
        XCTAssertEqual(play.target.anchorMedia, .seconds(10), "a paused group is where it paused, whatever the clock")
        XCTAssertTrue(play.rateChanged)
        let rate = GroupCommandPlanner.plan(.rate(2), current: paused, now: now, held: false)
        XCTAssertEqual(rate.target.rate, 2)
        XCTAssertTrue(rate.target.isPlaying, "a rate change plays")
        let same = GroupCommandPlanner.plan(.play(rate: 1), current: playing, now: now, held: false)
        XCTAssertFalse(same.rateChanged, "play on a group playing at that rate changes nothing to announce")
    }

    func testAHeldGroupStaysPausedWhateverTheCommand() {
        for intent in [GroupIntent.play(rate: 1), .rate(2), .seek(to: .seconds(4)), .playImmediately(rate: 1)] {
            let plan = GroupCommandPlanner.plan(intent, current: paused, now: now, held: true)
            XCTAssertFalse(plan.target.isPlaying, "\(intent) played a held group")
        }
    }

    func testPlayImmediatelyStartsWithoutTheBarrierAndAlwaysAnnouncesItsRate() {
        let plan = GroupCommandPlanner.plan(.playImmediately(rate: 1), current: playing, now: now, held: false)
        XCTAssertEqual(plan.start, .immediate)
        XCTAssertTrue(plan.rateChanged, "the proposer's start is a new anchor: everyone hears it")
        XCTAssertEqual(plan.target.anchorMedia, .seconds(12))
    }

    func testEveryoneHearsWhatChangedAndWhoCausedIt() {
        let a = ParticipantID("a"), b = ParticipantID("b")
        let plan = GroupCommandPlanner.plan(.seek(to: .seconds(3)), current: paused, now: now, held: false)
        var state = plan.target
        state.anchorClock = .seconds(101)
        let told = GroupCommandPlanner.announcements(of: plan, state: state, originator: a, to: [a, b])
        XCTAssertEqual(told[a], [.timeJumped(to: .seconds(3), originator: a, byOtherParticipant: false)])
        XCTAssertEqual(told[b], [.timeJumped(to: .seconds(3), originator: a, byOtherParticipant: true)])

        let pause = GroupCommandPlanner.plan(.pause, current: playing, now: now, held: false)
        let paused = GroupCommandPlanner.announcements(of: pause, state: pause.target, originator: nil, to: [a])
        XCTAssertEqual(paused[a], [.rateChanged(rate: 0, originator: nil, byOtherParticipant: false)],
                       "a paused group announces rate 0; no originator is nobody's 'other'")

        let nothing = GroupCommandPlanner.plan(.play(rate: 1), current: playing, now: now, held: false)
        XCTAssertTrue(GroupCommandPlanner.announcements(of: nothing, state: playing, originator: a, to: [a, b]).isEmpty)
    }
}
