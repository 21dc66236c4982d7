import GStreamer
import XCTest

/// `ClockTime`: conversions, arithmetic, GStreamer's "none" as nil, and its text (moved here from PropertyTests,
/// with `Duration` round trips added). Pure: needs no `gst_init`.
final class ClockTimeTests: XCTestCase {
    func testSecondsAndMillisecondsConvertBothWays() {
        XCTAssertEqual(ClockTime.seconds(1.5).nanoseconds, 1_500_000_000)
        XCTAssertEqual(ClockTime.milliseconds(2.5).nanoseconds, 2_500_000)
        XCTAssertEqual(ClockTime(nanoseconds: 2_250_000_000).seconds, 2.25)
        XCTAssertEqual(ClockTime(nanoseconds: 2_250_000).milliseconds, 2.25)
        XCTAssertEqual(ClockTime.seconds(0.000_000_001_4).nanoseconds, 1, "rounded to the nearest nanosecond")
        XCTAssertEqual(ClockTime.seconds(-3), .zero, "a negative span is no time: clamped to zero")
        XCTAssertEqual(ClockTime.seconds(12.345).seconds, 12.345, accuracy: 1e-12)
    }

    func testDurationRoundTrips() {
        XCTAssertEqual(ClockTime(.milliseconds(1500)).nanoseconds, 1_500_000_000)
        XCTAssertEqual(ClockTime(.nanoseconds(7)).nanoseconds, 7)
        XCTAssertEqual(ClockTime(.seconds(3600) + .milliseconds(1)).nanoseconds, 3_600_001_000_000)
        XCTAssertEqual(Duration.milliseconds(250).inSeconds, 0.25)
        XCTAssertEqual(Duration.seconds(-2).inSeconds, -2)
        XCTAssertEqual(Duration.nanoseconds(1).inSeconds, 1e-9, accuracy: 1e-18)
        XCTAssertEqual(ClockTime(.seconds(-1)), .zero)
    }

    func testNoneIsNil() {
        XCTAssertNil(ClockTime(raw: ClockTime.noneRawValue))
        XCTAssertEqual(ClockTime(raw: 42)?.nanoseconds, 42)
        XCTAssertEqual(ClockTime(raw: 0), .zero)
        let none: ClockTime? = nil
        XCTAssertEqual(none.rawClockTime, UInt.max)
        let some: ClockTime? = ClockTime(nanoseconds: 5_000)
        XCTAssertEqual(some.rawClockTime, 5_000)
        XCTAssertEqual(ClockTime(raw: some.rawClockTime), some)
    }

    func testArithmeticAndOrder() {
        let a = ClockTime.seconds(3), b = ClockTime.seconds(1.25)
        XCTAssertEqual(a + b, .seconds(4.25))
        XCTAssertEqual(a - b, .seconds(1.75))
        XCTAssertEqual(b - a, .zero, "subtraction saturates at zero")
        XCTAssertLessThan(b, a)
        XCTAssertEqual([a, .zero, b].sorted(), [.zero, b, a])
        XCTAssertEqual(Set([a, .seconds(3), b]).count, 2)
        XCTAssertEqual(max(a, b), a)
    }

    func testDescriptionIsHoursMinutesSecondsMilliseconds() {
        XCTAssertEqual(ClockTime.zero.description, "0:00:00.000")
        XCTAssertEqual(ClockTime.seconds(62.345).description, "0:01:02.345")
        XCTAssertEqual(ClockTime.seconds(3600 + 61.5).description, "1:01:01.500")
        XCTAssertEqual(ClockTime.seconds(3 * 3600 + 59 * 60 + 59.999).description, "3:59:59.999")
        XCTAssertEqual(ClockTime(nanoseconds: 999_999).description, "0:00:00.000", "truncated, not rounded")
        XCTAssertEqual(ClockTime.seconds(100 * 3600).description, "100:00:00.000")
    }
}
