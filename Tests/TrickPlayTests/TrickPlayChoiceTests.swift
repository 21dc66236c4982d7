import XCTest
@testable import TrickPlay

/// Which I-frame trick play shows: forward the last one the clock passed (at or before it), backward the last one
/// it passed going down (at or after it) — rewinding showed the I-frame one behind the clock. Pure.
final class TrickPlayChoiceTests: XCTestCase {
    private let times: [Double] = stride(from: 0.0, through: 22.0, by: 2.0).map { $0 }

    private func shown(_ clock: Double, rate: Double, start: Double) -> Double {
        times[TrickPlayChoice.index(times: times, clock: clock, rate: rate, start: start)]
    }

    func testForwardShowsTheIFrameAtOrBeforeTheClock() {
        XCTAssertEqual(shown(6.3, rate: 8, start: 4), 6)
        XCTAssertEqual(shown(6.0, rate: 8, start: 4), 6)
        XCTAssertEqual(shown(5.99, rate: 8, start: 4), 4)
        XCTAssertEqual(TrickPlayChoice.boundary(times: times, shown: 3, rate: 8, duration: 24), 8)
        XCTAssertEqual(TrickPlayChoice.boundary(times: times, shown: 11, rate: 8, duration: 24), 24)
    }

    func testRewindShowsTheIFrameTheClockJustCrossed() {
        // At the start: the I-frame at or before the start (not one from after it).
        XCTAssertEqual(shown(20.5, rate: -8, start: 20.5), 20)
        // Just below 20 s the clock has crossed 20, not 18: it was `iframe 18.0 s (clock 20.0 s)`.
        XCTAssertEqual(shown(19.999, rate: -8, start: 20.5), 20)
        XCTAssertEqual(shown(18.0, rate: -8, start: 20.5), 18)
        XCTAssertEqual(shown(17.2, rate: -8, start: 20.5), 18)
        XCTAssertEqual(shown(0, rate: -8, start: 20.5), 0)
        // The next one is due when the clock reaches the I-frame below (0 at the start).
        XCTAssertEqual(TrickPlayChoice.boundary(times: times, shown: 9, rate: -8, duration: 24), 16)
        XCTAssertEqual(TrickPlayChoice.boundary(times: times, shown: 0, rate: -8, duration: 24), 0)
    }

    func testTheShownIFrameIsNeverMoreThanOneIntervalFromTheClock() {
        for step in 0...200 {
            let clock = 20.0 - Double(step) * 0.1
            guard clock >= 0 else { break }
            let frame = shown(clock, rate: -8, start: 20.5)
            XCTAssertGreaterThanOrEqual(frame, clock - 1e-6, "clock \(clock)")
            XCTAssertLessThan(frame - clock, 2 + 1e-6, "clock \(clock)")
        }
    }
}
