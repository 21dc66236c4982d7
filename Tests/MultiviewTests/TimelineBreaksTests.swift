import GStreamer
import XCTest
@testable import Multiview

/// What counts as moving a coordinated view off the timeline its start put it on (`timelineBreaks`): the medium
/// lets a view whose timeline is unbroken rejoin after a stall as it plays, without a seek (StallRejoinTests).
/// Pure: no pipeline, no daemon.
final class TimelineBreaksTests: XCTestCase {
    /// A view started for a coordinated instant, the instant reached, the pipeline playing.
    private func started() -> PlayerStateMachine {
        var m = PlayerStateMachine()
        _ = m.apply(.changeState(to: .paused))
        _ = m.apply(.settled(.paused))
        _ = m.apply(.coordinatedStart(sinksAhead: true))
        _ = m.apply(.pipelineFollows)
        _ = m.apply(.stateChanged(.playing))
        _ = m.apply(.coordinatedWaiting(false))
        return m
    }

    func testStarvedVideoAndItsReturnLeaveTheTimelineUnbroken() {
        var m = started()
        let breaks = m.timelineBreaks
        _ = m.apply(.videoStarved)
        XCTAssertEqual(m.status.state, .buffering, "a starved view shows as buffering (the stall)")
        _ = m.apply(.videoFlowing)
        _ = m.apply(.buffering(percent: 100))
        XCTAssertEqual(m.status.state, .playing)
        XCTAssertEqual(m.timelineBreaks, breaks, "nothing moved the pipeline: it is still on its start's timeline")
    }

    func testTheStartItselfIsNoBreak() {
        var m = PlayerStateMachine()
        _ = m.apply(.changeState(to: .paused))
        let breaks = m.timelineBreaks
        _ = m.apply(.coordinatedStart(sinksAhead: true))
        _ = m.apply(.pipelineFollows)
        _ = m.apply(.stateChanged(.playing))
        _ = m.apply(.settled(.playing))
        _ = m.apply(.coordinatedWaiting(false))
        XCTAssertEqual(m.timelineBreaks, breaks)
    }

    func testEveryChangeOfThePipelinesStateOrPositionBreaksIt() {
        let moves: [(String, [PlayerStateMachine.Input])] = [
            ("a buffering hold", [.buffering(percent: 0)]),
            ("a seek", [.seekStarted, .seekFinished]),
            ("a pause", [.changeState(to: .paused)]),
            ("a cork", [.requestState(.paused, coordinated: true)]),
            ("a lost clock", [.clockLost]),
            ("a sink replaced", [.pipelineReset]),
            ("a stop", [.stop]),
            ("a failure", [.failed]),
            ("new media", [.loaded]),
        ]
        for (what, inputs) in moves {
            var m = started()
            let breaks = m.timelineBreaks
            for input in inputs { _ = m.apply(input) }
            XCTAssertGreaterThan(m.timelineBreaks, breaks, "\(what) left the timeline counted unbroken")
        }
    }

    func testTheEndOfABufferingHoldBreaksItAgain() {
        var m = started()
        _ = m.apply(.buffering(percent: 0))
        let held = m.timelineBreaks
        _ = m.apply(.stateChanged(.paused))
        _ = m.apply(.buffering(percent: 100))
        XCTAssertGreaterThan(m.timelineBreaks, held, "the resume picks another base time: not the start's timeline")
    }
}
