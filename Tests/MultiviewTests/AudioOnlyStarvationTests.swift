import GStreamer
import XCTest
@testable import Multiview

/// Issue 15 row 5: an audio-only view (the announcer) must never be shown as starved video. In a window playbin
/// feeds its video sink a visualisation made from the audio, which stops whenever the audio does; the starvation
/// watch counted that as starved video and held the view at "buffering 0%". Pure: the state machine and the
/// verdict, no pipeline; milliseconds.
final class AudioOnlyStarvationTests: XCTestCase {
    private typealias Machine = PlayerStateMachine

    private func playing(hasVideo: Bool) -> Machine {
        var m = Machine()
        _ = m.apply(.loaded)
        _ = m.apply(.streamsKnown(hasVideo: hasVideo))
        _ = m.apply(.changeState(to: .playing))
        _ = m.apply(.settled(.playing))
        return m
    }

    /// After a seek (which re-arms the watch) the audio-only view is still not watched, and a starved verdict
    /// changes nothing: it keeps showing PLAYING.
    func testAnAudioOnlyViewIsNeverWatchedNorShownStarvedAfterASeek() {
        var m = playing(hasVideo: false)
        XCTAssertFalse(m.watchesVideoFlow)
        _ = m.apply(.seekStarted)
        _ = m.apply(.seekFinished)
        XCTAssertFalse(m.watchesVideoFlow, "a seek re-armed the watch for audio-only media")
        // Visualisation frames came, then stopped for a second: the verdict the watch would reach.
        let verdict = StarvationVerdict.judge(silence: .seconds(1), frameDuration: .milliseconds(40),
                                              starved: m.videoStarved, watching: m.watchesVideoFlow)
        XCTAssertNil(verdict)
        XCTAssertEqual(m.apply(.videoStarved), [], "a starved verdict changed an audio-only view")
        XCTAssertEqual(m.status, PlayerStatus(state: .playing))
    }

    /// A starved mark set before the collection said "no video" is cleared by it.
    func testLearningTheMediaIsAudioOnlyClearsAStarvedMark() {
        var m = playing(hasVideo: true)
        _ = m.apply(.videoStarved)
        XCTAssertEqual(m.status.state, .buffering)
        XCTAssertEqual(m.apply(.streamsKnown(hasVideo: false)), [.publishStatus(PlayerStatus(state: .playing))])
    }

    /// Media with video are still watched, after a seek too, and shown starved (the control).
    func testAViewWithVideoIsStillWatchedAndShownStarved() {
        var m = playing(hasVideo: true)
        _ = m.apply(.seekStarted)
        _ = m.apply(.seekFinished)
        XCTAssertTrue(m.watchesVideoFlow)
        let verdict = StarvationVerdict.judge(silence: .seconds(1), frameDuration: .milliseconds(40),
                                              starved: m.videoStarved, watching: m.watchesVideoFlow)
        XCTAssertEqual(verdict, .videoStarved)
        XCTAssertEqual(m.apply(.videoStarved),
                       [.publishStatus(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 0)))])
    }

    /// A new source is assumed to have video until its collection arrives (the watch only counts silence after
    /// a first frame anyway).
    func testANewSourceForgetsThatThePreviousOneWasAudioOnly() {
        var m = playing(hasVideo: false)
        _ = m.apply(.loaded)
        XCTAssertTrue(m.mediaHasVideo)
    }
}
