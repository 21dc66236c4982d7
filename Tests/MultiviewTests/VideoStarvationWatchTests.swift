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
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(100)), "no frame yet: no silence to speak of")
        flow.arrived(frameDuration: .milliseconds(40))
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(200)), .zero)
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(900)), .milliseconds(700))
        flow.rearm()
        XCTAssertNil(tracker.observe(flow.snapshot, at: .milliseconds(1000)))
        flow.arrived(frameDuration: nil)
        XCTAssertEqual(tracker.observe(flow.snapshot, at: .milliseconds(1100)), .zero)
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

    func testTheWatchJudgesStarvationAfterTheLimitOnItsClock() async {
        let clock = TestClock()
        let flow = VideoFlow()
        let (ticks, tick) = AsyncStream<Duration?>.makeStream()
        let watch = VideoStarvationWatch.start(flow: flow, clock: clock) { silence, _ in
            tick.yield(silence)
            return true
        }
        defer { watch.cancel() }
        var iterator = ticks.makeAsyncIterator()
        var machine = PlayerStateMachine()
        _ = machine.apply(.changeState(to: .playing))
        _ = machine.apply(.settled(.playing))
        /// Advances one tick and feeds its verdict to the machine, as the player does.
        func advanceOneTick() async -> Duration? {
            await clock.advance(by: VideoStarvationWatch.interval)
            let silence = await iterator.next() ?? nil
            if let input = StarvationVerdict.judge(silence: silence, frameDuration: flow.snapshot.frameDuration,
                                                   starved: machine.videoStarved, watching: machine.watchesVideoFlow) {
                _ = machine.apply(input)
            }
            return silence
        }
        flow.arrived(frameDuration: .milliseconds(40))
        let first = await advanceOneTick()
        XCTAssertEqual(first, .zero)
        for _ in 0..<5 { _ = await advanceOneTick() }
        XCTAssertEqual(machine.status.state, .playing, "500 ms of silence is still within the limit")
        let sixth = await advanceOneTick()
        XCTAssertEqual(sixth, .milliseconds(600))
        XCTAssertEqual(machine.status, PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 0)))
        flow.arrived(frameDuration: .milliseconds(40))
        _ = await advanceOneTick()
        XCTAssertEqual(machine.status, PlayerStatus(state: .playing))
    }

    func testTheWatchEndsWhenItsPlayerIsGone() async {
        let clock = TestClock()
        let watch = VideoStarvationWatch.start(flow: VideoFlow(), clock: clock) { _, _ in false }
        await clock.advance(by: VideoStarvationWatch.interval)
        await watch.value   // returns: the loop ended by itself
    }
}
