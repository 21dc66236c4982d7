import Clocks
import GStreamer
import XCTest
@testable import Multiview

/// The starvation watch on a test clock: the verdict is tested by advancing time, not by starving a pipeline.
/// No GStreamer pipeline, no daemon; milliseconds.
final class VideoStarvationWatchTests: XCTestCase {
    func testSilenceIsMeasuredFromTheTickThatSawTheLastFrameAndARearmForgetsIt() {
        let flow = VideoFlow()
        var tracker = VideoSilenceTracker()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(100), watching: true), "no frame yet: no silence to speak of")
        flow.arrived(frameDuration: .milliseconds(40))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(200), watching: true), .zero)
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(900), watching: true), .milliseconds(700))
        flow.rearm()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(1000), watching: false), "rearmed and not watched: not counting")
        flow.arrived(frameDuration: nil)
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(1100), watching: false), .zero)
    }

    /// The rare CI failure's suspected shape: a PLAYING after the view's last frame rearms the watch and no frame
    /// follows. Measured from the next frame, that silence never began (before the fix: nil for ever, the view
    /// shown playing a frozen picture); it is counted from the first watched tick after the rearm.
    func testAPlayingThatNoFrameFollowsIsSilenceFromTheFirstWatchedTick() {
        let flow = VideoFlow()
        var tracker = VideoSilenceTracker()
        flow.arrived(frameDuration: .milliseconds(40))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(100), watching: true), .zero)
        flow.rearm()
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(200), watching: true), .zero)
        let silence = tracker.observe(flow.snapshot, at: .milliseconds(900), watching: true)
        XCTAssertEqual(silence, .milliseconds(700))
        XCTAssertEqual(StarvationVerdict.judge(silence: silence, frameDuration: .milliseconds(40), starved: false, watching: true),
                       .videoStarved)
    }

    /// A rearm followed by a wait the view is not watched in (a coordinated start's wait for its instant, a pause):
    /// the wait is not silence; counting begins when the view is watched.
    func testAnUnwatchedWaitAfterARearmIsNotSilence() {
        let flow = VideoFlow()
        var tracker = VideoSilenceTracker()
        flow.arrived(frameDuration: .milliseconds(40))
        _ = tracker.observe(flow.snapshot, at: .milliseconds(100), watching: true)
        flow.rearm()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(200), watching: false))
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(2000), watching: false))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(2100), watching: true), .zero)
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(2300), watching: true), .milliseconds(200))
        flow.arrived(frameDuration: .milliseconds(40))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(2400), watching: true), .zero)
    }

    /// Media without video (no frame since it was loaded, even after video media) is never silent.
    func testMediaThatShowedNoVideoIsNeverSilent() {
        let flow = VideoFlow()
        var tracker = VideoSilenceTracker()
        flow.rearm()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(100), watching: true))
        XCTAssertNil(tracker.observe(flow.snapshot, at: .seconds(5), watching: true))
        flow.arrived(frameDuration: .milliseconds(40))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(5100), watching: true), .zero)
        flow.mediaLoaded()   // audio-only media next
        flow.rearm()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(5200), watching: true))
        XCTAssertNil(tracker.observe(flow.snapshot, at: .seconds(9), watching: true))
    }

    func testTheVerdict() {
        typealias V = StarvationVerdict
        let frame: Duration = .milliseconds(40)
        XCTAssertNil(V.judge(silence: nil, frameDuration: frame, starved: false, watching: true))
        XCTAssertNil(V.judge(silence: .milliseconds(400), frameDuration: frame, starved: false, watching: true))
        XCTAssertEqual(V.judge(silence: .milliseconds(600), frameDuration: frame, starved: false, watching: true), .videoStarved)
        XCTAssertNil(V.judge(silence: .milliseconds(600), frameDuration: frame, starved: false, watching: false),
                     "not watching (paused, seeking, waiting, ended): silence is not starvation")
        XCTAssertEqual(V.judge(silence: .zero, frameDuration: frame, starved: true, watching: false), .videoFlowing,
                       "frames coming back end it in whatever state")
        XCTAssertNil(V.judge(silence: .milliseconds(600), frameDuration: frame, starved: true, watching: true))
        // Slow media: four frame durations, not the 500 ms floor.
        XCTAssertNil(V.judge(silence: .milliseconds(1500), frameDuration: .milliseconds(500), starved: false, watching: true))
        XCTAssertEqual(V.judge(silence: .milliseconds(2100), frameDuration: .milliseconds(500), starved: false, watching: true),
                       .videoStarved)
    }

    /// The watch, the tracker, the verdict and the state machine together, as the player wires them.
    private struct Harness {
        let clock = TestClock()
        let flow = VideoFlow()
        var machine = PlayerStateMachine()
        var tracker = VideoSilenceTracker()
        var iterator: AsyncStream<(VideoFlow.Snapshot, Duration)>.AsyncIterator
        let watch: Task<Void, Never>

        init() {
            let (ticks, tick) = AsyncStream<(VideoFlow.Snapshot, Duration)>.makeStream()
            iterator = ticks.makeAsyncIterator()
            watch = VideoStarvationWatch.start(flow: flow, clock: clock) { snapshot, time in
                tick.yield((snapshot, time))
                return true
            }
        }

        /// Applies an input and performs its rearm, as `Player.apply` does.
        mutating func apply(_ input: PlayerStateMachine.Input) {
            if machine.apply(input).contains(.rearmVideoWatch) { flow.rearm() }
        }

        /// Advances one tick and feeds its verdict to the machine, as the player does; returns the silence.
        mutating func advanceOneTick() async -> Duration? {
            await clock.advance(by: VideoStarvationWatch.interval)
            guard let (snapshot, time) = await iterator.next() else { return nil }
            let watching = machine.watchesVideoFlow
            let silence = tracker.observe(snapshot, at: time, watching: watching)
            if let input = StarvationVerdict.judge(silence: silence, frameDuration: snapshot.frameDuration,
                                                   starved: machine.videoStarved, watching: watching) {
                apply(input)
            }
            return silence
        }
    }

    func testTheWatchJudgesStarvationAfterTheLimitOnItsClock() async {
        var h = Harness()
        defer { h.watch.cancel() }
        h.apply(.changeState(to: .playing))
        h.apply(.settled(.playing))
        h.flow.arrived(frameDuration: .milliseconds(40))
        let first = await h.advanceOneTick()
        XCTAssertEqual(first, .zero)
        for _ in 0..<5 { _ = await h.advanceOneTick() }
        XCTAssertEqual(h.machine.status.state, .playing, "500 ms of silence is still within the limit")
        let sixth = await h.advanceOneTick()
        XCTAssertEqual(sixth, .milliseconds(600))
        XCTAssertEqual(h.machine.status, PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 0)))
        h.flow.arrived(frameDuration: .milliseconds(40))
        _ = await h.advanceOneTick()
        XCTAssertEqual(h.machine.status, PlayerStatus(state: .playing))
    }

    /// A PAUSED → PLAYING cycle on the bus after the last frame (a sink that lost its state and prerolled again,
    /// late state messages): the view is shown playing, then starved once the limit passes with no frame.
    func testAViewPlayingAgainWithNoFrameIsJudgedStarved() async {
        var h = Harness()
        defer { h.watch.cancel() }
        h.apply(.changeState(to: .playing))
        h.apply(.settled(.playing))
        h.flow.arrived(frameDuration: .milliseconds(40))
        _ = await h.advanceOneTick()
        h.apply(.stateChanged(.paused))
        h.apply(.stateChanged(.playing))
        XCTAssertEqual(h.machine.status, PlayerStatus(state: .playing))
        for _ in 0..<6 { _ = await h.advanceOneTick() }
        XCTAssertEqual(h.machine.status, PlayerStatus(state: .playing), "within the limit of the rearm")
        _ = await h.advanceOneTick()
        XCTAssertEqual(h.machine.status, PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 0)),
                       "no frame since the PLAYING: starved")
    }

    func testTheWatchEndsWhenItsPlayerIsGone() async {
        let clock = TestClock()
        let watch = VideoStarvationWatch.start(flow: VideoFlow(), clock: clock) { _, _ in false }
        await clock.advance(by: VideoStarvationWatch.interval)
        await watch.value   // returns: the loop ended by itself
    }
}
