import Coordination
import GStreamer
import XCTest

/// `GroupState`: the group's timeline — media time M + rate·(t − C) at clock time t, and back. Pure.
final class GroupStateTests: XCTestCase {
    private func state(rate: Double = 1, playing: Bool = true, media: Double = 10, clock: Double? = 100) -> GroupState {
        GroupState(itemIdentifier: "match", rate: rate, isPlaying: playing, anchorMedia: .seconds(media),
                   anchorClock: clock.map { .seconds($0) })
    }

    func testMediaTimeExtrapolatesAtTheRate() {
        XCTAssertEqual(state().mediaTime(at: .seconds(100)), .seconds(10))
        XCTAssertEqual(state().mediaTime(at: .seconds(103.5)), .seconds(13.5))
        XCTAssertEqual(state(rate: 2).mediaTime(at: .seconds(103)), .seconds(16))
        XCTAssertEqual(state(rate: 0.5).mediaTime(at: .seconds(104)), .seconds(12))
    }

    func testBeforeTheAnchorTheTimelineRunsBackAndStopsAtZero() {
        XCTAssertEqual(state().mediaTime(at: .seconds(98)), .seconds(8), "a clock time before the anchor")
        XCTAssertEqual(state(rate: 2).mediaTime(at: .seconds(99)), .seconds(8))
        XCTAssertEqual(state().mediaTime(at: .seconds(50)), .zero, "never before the media's start")
    }

    func testPausedStaysAtTheAnchor() {
        XCTAssertEqual(state(playing: false).mediaTime(at: .seconds(500)), .seconds(10))
        XCTAssertEqual(state(clock: nil).mediaTime(at: .seconds(500)), .seconds(10), "no anchor clock: paused")
        XCTAssertNil(state(playing: false).clockTime(forMedia: .seconds(12)))
        XCTAssertNil(state(clock: nil).clockTime(forMedia: .seconds(12)))
    }

    func testClockTimeForMediaIsTheInverse() {
        XCTAssertEqual(state().clockTime(forMedia: .seconds(12)), .seconds(102))
        XCTAssertEqual(state(rate: 2).clockTime(forMedia: .seconds(16)), .seconds(103))
        XCTAssertEqual(state(rate: 2).clockTime(forMedia: .seconds(8)), .seconds(99), "media already played")
        for rate in [0.125, 0.5, 1, 2, 8] {
            let s = state(rate: rate)
            for media in [10.0, 10.25, 17, 60] {
                let clock = try! XCTUnwrap(s.clockTime(forMedia: .seconds(media)))
                let back = s.mediaTime(at: clock)
                XCTAssertEqual(Double(back.nanoseconds), Double(ClockTime.seconds(media).nanoseconds), accuracy: 2,
                               "rate \(rate), media \(media)")
            }
        }
    }

    func testNoClockTimeAtAStoppedRate() {
        XCTAssertNil(state(rate: 0).clockTime(forMedia: .seconds(12)))
        XCTAssertEqual(state(rate: 0).mediaTime(at: .seconds(200)), .seconds(10))
    }

    func testDescription() {
        XCTAssertEqual(state(rate: 2).description, "match playing ×2.0 at 0:00:10.000 @clock 0:01:40.000")
        XCTAssertEqual(state(playing: false, clock: nil).description, "match paused ×1.0 at 0:00:10.000")
    }
}
