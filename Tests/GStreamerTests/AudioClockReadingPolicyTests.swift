import GStreamer
import XCTest

/// `AudioClockReadingPolicy`: the guard's decisions with injected readings and instants (ns). Pure: no pipeline,
/// no daemon.
final class AudioClockReadingPolicyTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let s: UInt64 = 1_000_000_000

    /// Asks the sink (when the policy lets it) and returns what the clock would be answered; nil for "none".
    private func read(_ policy: inout AudioClockReadingPolicy, sink: UInt64?, at now: UInt64) -> UInt64?? {
        switch policy.beforeAsking(now: now) {
        case .answer(let time): return .some(time)
        case .lost: return .none
        case .askSink: return .some(policy.afterAsking(reading: sink, now: now))
        }
    }

    func testReadingsRunningWithRealTimeAreAnsweredAsTheSinkGivesThem() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        for i in UInt64(0)..<50 {
            XCTAssertEqual(read(&policy, sink: 2 * s + i * 10 * ms, at: 100 * s + i * 10 * ms), .some(2 * s + i * 10 * ms))
        }
        // A stall and the server's catch-up afterwards stay within real time: accepted.
        XCTAssertEqual(read(&policy, sink: 2 * s + 490 * ms, at: 102 * s), .some(2 * s + 490 * ms))
        XCTAssertEqual(read(&policy, sink: 4 * s, at: 102 * s + 10 * ms), .some(4 * s))
        XCTAssertEqual(policy.refused, 0)
        XCTAssertEqual(policy.extrapolated, 0, "unarmed: nothing extrapolated")
    }

    func testAStreamTimeThatJumpsYearsAheadIsRefusedAndTheLastGoodOneExtrapolated() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        XCTAssertEqual(read(&policy, sink: 15 * s, at: 50 * s), .some(15 * s))
        let eightAndAHalfYears: UInt64 = 268_000_000 * s
        // What the sink would have reached by then, not the wrap.
        XCTAssertEqual(read(&policy, sink: eightAndAHalfYears, at: 50 * s + 20 * ms), .some(15 * s + 20 * ms))
        // The wrap sticks in libpulse: every later reading is absurd too, and still extrapolated.
        XCTAssertEqual(read(&policy, sink: eightAndAHalfYears + 1 * s, at: 51 * s), .some(16 * s))
        XCTAssertEqual(policy.refused, 2)
        // A sane reading again (a new stream) is taken as it comes.
        XCTAssertEqual(read(&policy, sink: 10 * ms, at: 52 * s), .some(10 * ms))
        XCTAssertEqual(policy.refused, 2)
    }

    func testAFirstReadingYearsAheadIsRefusedWithNone() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        XCTAssertEqual(read(&policy, sink: 500 * 365 * 86_400 * s, at: 5 * s), .some(nil))
        XCTAssertEqual(policy.refused, 1)
        XCTAssertEqual(read(&policy, sink: 20 * ms, at: 5 * s + 20 * ms), .some(20 * ms))
    }

    func testAJumpWithinTheToleranceIsAccepted() {
        var policy = AudioClockReadingPolicy(window: 100 * ms, jumpTolerance: 1 * s)
        XCTAssertEqual(read(&policy, sink: 1 * s, at: 10 * s), .some(1 * s))
        XCTAssertEqual(read(&policy, sink: 1 * s + 900 * ms, at: 10 * s), .some(1 * s + 900 * ms), "0.9 s ahead: within 1 s")
        XCTAssertEqual(read(&policy, sink: 3 * s + 1 * ms, at: 10 * s + 100 * ms), .some(2 * s),
                       "1.001 s ahead of 1.9 s + 0.1 s: refused")
    }

    func testAnArmedStartIsAnsweredByExtrapolationForTheWindowThenByTheSink() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 10 * s)
        // Before the armed instant: asked, no window.
        XCTAssertEqual(read(&policy, sink: 3 * s, at: 9 * s), .some(3 * s))
        XCTAssertEqual(policy.windows, 0)
        // The first reading at or after it is the calibration: asked, and it opens the window.
        XCTAssertEqual(read(&policy, sink: 3 * s, at: 10 * s + 1 * ms), .some(3 * s))
        XCTAssertEqual(policy.windows, 1)
        XCTAssertNil(policy.armedAfter)
        // Inside the window the sink's garbage is never seen: extrapolated from the calibration.
        XCTAssertEqual(policy.beforeAsking(now: 10 * s + 51 * ms), .answer(3 * s + 50 * ms))
        XCTAssertEqual(policy.extrapolated, 1)
        // After it, the sink again.
        XCTAssertEqual(policy.beforeAsking(now: 10 * s + 101 * ms), .askSink)
        XCTAssertEqual(policy.afterAsking(reading: 3 * s + 95 * ms, now: 10 * s + 101 * ms), 3 * s + 95 * ms)
    }

    func testNoneFromTheSinkStaysNoneAndDoesNotOpenTheWindow() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 1 * s)
        XCTAssertEqual(read(&policy, sink: nil, at: 2 * s), .some(nil))
        XCTAssertEqual(policy.windows, 0)
        XCTAssertEqual(policy.armedAfter, 1 * s)
    }

    func testALostSinkIsNeverAskedAgain() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 1 * s)
        XCTAssertEqual(read(&policy, sink: 1 * s, at: 1 * s), .some(1 * s))
        policy.markLost()
        XCTAssertTrue(policy.isLost)
        // Even inside the start window: the answer is "none" and the guard keeps the sink from starting.
        XCTAssertEqual(policy.beforeAsking(now: 1 * s + 10 * ms), .lost)
        policy.arm(at: 3 * s)
        XCTAssertEqual(policy.beforeAsking(now: 4 * s), .lost)
    }
}
