import GStreamer
import XCTest
@testable import Multiview

/// The player's decisions without a pipeline: bus facts and commands in, actions and status out. No GStreamer
/// pipeline, no daemon; milliseconds.
final class PlayerStateMachineTests: XCTestCase {
    private typealias Machine = PlayerStateMachine

    /// A machine that was asked to play and is playing.
    private func playing() -> Machine {
        var m = Machine()
        _ = m.apply(.changeState(to: .playing))
        _ = m.apply(.settled(.playing))
        return m
    }

    private func statuses(_ actions: [Machine.Action]) -> [PlayerStatus] {
        actions.compactMap { if case .publishStatus(let s) = $0 { return s } else { return nil } }
    }

    func testANewMachineIsStoppedAndPlayingGoesThroughLoading() {
        var m = Machine()
        XCTAssertEqual(m.status, PlayerStatus(state: .stopped))
        XCTAssertEqual(m.apply(.changeState(to: .playing)),
                       [.armAudioClockGuard, .publishStatus(PlayerStatus(state: .paused, waitingToPlay: .loading))])
        XCTAssertFalse(m.hasPlayed)
        // The settled read of PLAYING starts the video watch (a first PLAYING that rearmed nothing left a starved
        // view unjudged for good: the bus's own message then found the view playing already).
        XCTAssertEqual(m.apply(.settled(.playing)), [.rearmVideoWatch, .publishStatus(PlayerStatus(state: .playing))])
        XCTAssertTrue(m.hasPlayed)
        // The bus's own message for the same change does nothing more.
        XCTAssertEqual(m.apply(.stateChanged(.playing)), [])
    }

    func testWhicheverReportsPlayingFirstRearmsTheVideoWatchOnce() {
        var m = Machine()
        _ = m.apply(.changeState(to: .playing))
        XCTAssertEqual(m.apply(.stateChanged(.playing)).filter { $0 == .rearmVideoWatch }, [.rearmVideoWatch])
        XCTAssertEqual(m.apply(.settled(.playing)).filter { $0 == .rearmVideoWatch }, [])
    }

    func testPausingIsNotWaitingAndAPausedRequestArmsNoGuard() {
        var m = playing()
        XCTAssertEqual(m.apply(.changeState(to: .paused)), [])   // still PLAYING until the pipeline says otherwise
        XCTAssertEqual(m.apply(.stateChanged(.paused)), [.publishStatus(PlayerStatus(state: .paused))])
    }

    func testBufferingHoldsInPausedAndResumesAtOneHundredPercent() {
        var m = playing()
        XCTAssertEqual(m.apply(.buffering(percent: 40)),
                       [.setPipelineState(.paused), .publishStatus(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 40)))])
        XCTAssertEqual(m.apply(.stateChanged(.paused)), [])
        XCTAssertEqual(m.apply(.buffering(percent: 70)),
                       [.publishStatus(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 70)))])
        let resumed = m.apply(.buffering(percent: 100))
        XCTAssertEqual(Array(resumed.prefix(2)), [.armAudioClockGuard, .setPipelineState(.playing)])
        XCTAssertEqual(statuses(resumed), [PlayerStatus(state: .paused, waitingToPlay: .loading)])
        XCTAssertEqual(statuses(m.apply(.stateChanged(.playing))), [PlayerStatus(state: .playing)])
    }

    func testTheHundredPercentMessageBeforeThePausedStateChangeStillResumes() {
        // Under load the 100 % message can be read before the PAUSED state change: the view must not stay paused.
        var m = playing()
        XCTAssertEqual(m.apply(.buffering(percent: 30)).first, .setPipelineState(.paused))
        XCTAssertEqual(m.current, .playing)
        XCTAssertEqual(Array(m.apply(.buffering(percent: 100)).prefix(2)), [.armAudioClockGuard, .setPipelineState(.playing)])
        XCTAssertFalse(m.heldForBuffering)
    }

    func testBufferingOfAViewNotAskedToPlayOnlyShowsNothing() {
        var m = Machine()
        _ = m.apply(.changeState(to: .paused))
        _ = m.apply(.settled(.paused))
        XCTAssertEqual(m.apply(.buffering(percent: 20)), [])
        XCTAssertEqual(m.status, PlayerStatus(state: .paused))
    }

    func testALostClockIsReselectedThroughPausedOnlyWhilePlaying() {
        var m = playing()
        XCTAssertEqual(m.apply(.clockLost), [.setPipelineState(.paused), .armAudioClockGuard, .setPipelineState(.playing)])
        var paused = Machine()
        _ = paused.apply(.changeState(to: .paused))
        XCTAssertEqual(paused.apply(.clockLost), [])
    }

    func testACorkPausesAndAnUncorkResumesOnlyWhenUncoordinated() {
        var m = playing()
        XCTAssertEqual(m.apply(.requestState(.paused, coordinated: false)),
                       [.publishInterruption(began: true), .setPipelineState(.paused)])
        XCTAssertEqual(m.target, .paused)
        XCTAssertEqual(Array(m.apply(.requestState(.playing, coordinated: false)).prefix(3)),
                       [.publishInterruption(began: false), .armAudioClockGuard, .setPipelineState(.playing)])

        var coordinated = playing()
        _ = coordinated.apply(.requestState(.paused, coordinated: true))
        XCTAssertEqual(coordinated.apply(.requestState(.playing, coordinated: true)), [.publishInterruption(began: false)])
        XCTAssertEqual(coordinated.target, .paused, "a coordinator decides when a coordinated view plays again")
        // READY or NULL requests are not interruptions.
        XCTAssertEqual(coordinated.apply(.requestState(.ready, coordinated: false)), [])
    }

    func testASeekShowsSeekingUntilItIsDoneAndForgetsTheEnd() {
        var m = playing()
        _ = m.apply(.endOfStream)
        XCTAssertTrue(m.reachedEnd)
        // A flushing seek of a playing pipeline restarts its sinks by itself: the audio clock guard is armed for it.
        XCTAssertEqual(m.apply(.seekStarted), [.armAudioClockGuard, .rearmVideoWatch,
                                               .publishStatus(PlayerStatus(state: .playing, waitingToPlay: .seeking))])
        XCTAssertFalse(m.reachedEnd)
        XCTAssertFalse(m.watchesVideoFlow, "a seek's preroll is not starvation")
        XCTAssertEqual(m.apply(.seekFinished), [.publishStatus(PlayerStatus(state: .playing))])
    }

    func testASeekOfAPausedViewArmsNoAudioClockGuard() {
        var m = playing()
        _ = m.apply(.changeState(to: .paused))
        XCTAssertFalse(m.apply(.seekStarted).contains(.armAudioClockGuard), "a paused pipeline does not restart its sinks")
    }

    func testASeekInsideAnotherOperationKeepsSeekingUntilBothAreDone() {
        var m = playing()
        _ = m.apply(.seekStarted)
        _ = m.apply(.seekStarted)
        XCTAssertEqual(m.apply(.seekFinished), [])
        XCTAssertEqual(m.status.waitingToPlay, .seeking)
        XCTAssertEqual(m.apply(.seekFinished), [.publishStatus(PlayerStatus(state: .playing))])
        XCTAssertEqual(m.apply(.seekFinished), [], "an unmatched finish changes nothing")
    }

    func testACoordinatedStartWaitsForItsInstantAndStaleInstantsAreRecognised() {
        var m = Machine()
        XCTAssertEqual(statuses(m.apply(.coordinatedWaiting(true))),
                       [PlayerStatus(state: .paused, waitingToPlay: .waitingForCoordinatedPlayback)])
        _ = m.apply(.changeState(to: .paused))
        _ = m.apply(.settled(.paused))
        let before = m.coordinatedWaitingGeneration
        XCTAssertEqual(m.apply(.coordinatedStart(sinksAhead: false)), [.rearmVideoWatch])
        XCTAssertEqual(m.target, .playing)
        XCTAssertNotEqual(m.coordinatedWaitingGeneration, before, "a start instant scheduled earlier is stale now")
        XCTAssertEqual(statuses(m.apply(.stateChanged(.playing))),
                       [PlayerStatus(state: .playing, waitingToPlay: .waitingForCoordinatedPlayback)])
        XCTAssertFalse(m.watchesVideoFlow, "the wait for the instant is not starvation")
        XCTAssertEqual(statuses(m.apply(.coordinatedWaiting(false))), [PlayerStatus(state: .playing)])
        XCTAssertTrue(m.watchesVideoFlow)
    }

    func testAPipelineWhoseSinksStartedAheadIsBroughtUpOnceBeforeAnythingElse() {
        var m = Machine()
        _ = m.apply(.changeState(to: .paused))
        _ = m.apply(.settled(.paused))
        _ = m.apply(.coordinatedStart(sinksAhead: true))
        XCTAssertTrue(m.sinksAheadOfPipeline)
        XCTAssertEqual(m.apply(.pipelineFollows), [.setPipelineState(.playing)])
        XCTAssertEqual(m.apply(.pipelineFollows), [], "once")

        var stopped = Machine()
        _ = stopped.apply(.coordinatedStart(sinksAhead: true))
        _ = stopped.apply(.stop)
        XCTAssertEqual(stopped.apply(.pipelineFollows), [], "a stopped pipeline is not brought up")
        var failed = Machine()
        _ = failed.apply(.coordinatedStart(sinksAhead: true))
        _ = failed.apply(.failed)
        XCTAssertEqual(failed.apply(.pipelineFollows), [])
    }

    func testStarvedVideoShowsBufferingZeroAndANewPlayingClearsIt() {
        var m = playing()
        XCTAssertTrue(m.watchesVideoFlow)
        XCTAssertEqual(m.apply(.videoStarved),
                       [.publishStatus(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 0)))])
        XCTAssertEqual(m.apply(.videoFlowing), [.publishStatus(PlayerStatus(state: .playing))])
        _ = m.apply(.videoStarved)
        _ = m.apply(.stateChanged(.paused))
        XCTAssertEqual(m.apply(.stateChanged(.playing)), [.rearmVideoWatch, .publishStatus(PlayerStatus(state: .playing))])
        XCTAssertFalse(m.videoStarved)
    }

    func testAFailureStopsOnceAndIgnoresLaterRequests() {
        var m = playing()
        XCTAssertEqual(m.apply(.failed), [.setPipelineState(.null), .publishStatus(PlayerStatus(state: .stopped))])
        XCTAssertEqual(m.apply(.failed), [])
        XCTAssertEqual(m.apply(.requestState(.playing, coordinated: false)), [])
        XCTAssertFalse(m.watchesVideoFlow)
        _ = m.apply(.loaded)
        XCTAssertFalse(m.hasFailed)
    }

    func testStopGoesToNullAndAResetKeepsWhatWasAsked() {
        var m = playing()
        XCTAssertEqual(m.apply(.pipelineReset), [.setPipelineState(.null), .publishStatus(PlayerStatus(state: .paused, waitingToPlay: .loading))])
        XCTAssertEqual(m.target, .playing)
        XCTAssertEqual(m.apply(.stop), [.setPipelineState(.null), .publishStatus(PlayerStatus(state: .stopped))])
        XCTAssertEqual(m.target, .null)
    }
}
