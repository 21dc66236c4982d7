import GStreamer
import XCTest

/// Pure: `RoundTripLimitPolicy` on made-up round trips and instants (milliseconds; no clock, no network).
final class RoundTripLimitPolicyTests: XCTestCase {
    private func ms(_ value: Double) -> Duration { .microseconds(Int64(value * 1000)) }

    /// A 20 ± 5 ms link (round trips 30…50 ms, median 40) learnt over 5 exchanges.
    private func learnt(_ parameters: RoundTripLimitPolicy.Parameters = .init(learning: 5)) -> RoundTripLimitPolicy {
        var policy = RoundTripLimitPolicy(parameters: parameters)
        for (i, rtt) in [45.0, 30, 40, 50, 35].enumerated() { _ = policy.accepted(roundTrip: ms(rtt), at: ms(Double(i) * 5)) }
        return policy
    }

    func testTheCeilingHoldsWhileLearning() {
        var policy = RoundTripLimitPolicy(parameters: .init(learning: 5))
        XCTAssertEqual(policy.limit, .milliseconds(200))
        for rtt in [45.0, 30, 40, 50] { XCTAssertNil(policy.accepted(roundTrip: ms(rtt), at: .zero)) }
        XCTAssertTrue(policy.isLearning)
        XCTAssertEqual(policy.limit, .milliseconds(200))
    }

    func testOnceLearntTheLimitIsTheShortestPlusTwiceTheSpreadToTheMedian() {
        var policy = RoundTripLimitPolicy(parameters: .init(learning: 5))
        for rtt in [45.0, 30, 40, 50] { _ = policy.accepted(roundTrip: ms(rtt), at: .zero) }
        XCTAssertEqual(policy.accepted(roundTrip: ms(35), at: .zero), ms(50), "30 + 2 × (40 − 30)")
        XCTAssertFalse(policy.isLearning)
        XCTAssertEqual(policy.limit, ms(50))
    }

    func testADelayedExchangeDoesNotMoveTheLimitAShorterOneLowersIt() {
        var policy = learnt()
        XCTAssertNil(policy.accepted(roundTrip: ms(48), at: ms(30)), "within the link's spread")
        XCTAssertNil(policy.accepted(roundTrip: ms(120), at: ms(35)), "the spread was learnt; it does not widen")
        XCTAssertEqual(policy.accepted(roundTrip: ms(28), at: ms(40)), ms(48), "a new shortest: 28 + 20")
    }

    func testTheLimitStaysWithinTheFloorAndTheCeiling() {
        var loopback = RoundTripLimitPolicy(parameters: .init(learning: 3))
        for rtt in [0.05, 0.06, 0.07] { _ = loopback.accepted(roundTrip: ms(rtt), at: .zero) }
        XCTAssertEqual(loopback.limit, ms(1.05), "a few µs of spread: at least 1 ms above the shortest")

        var slow = RoundTripLimitPolicy(parameters: .init(learning: 3, ceiling: .milliseconds(200)))
        for rtt in [150.0, 190, 195] { _ = slow.accepted(roundTrip: ms(rtt), at: .zero) }
        XCTAssertEqual(slow.limit, .milliseconds(200), "150 + 80 is above the ceiling")
    }

    func testSilenceWhileLimitingGoesBackToTheCeilingAndLearnsAgain() {
        var policy = learnt()
        XCTAssertEqual(policy.limit, ms(50))
        XCTAssertNil(policy.tick(at: ms(20 + 999)), "not yet a second since the last accepted exchange (at 20 ms)")
        XCTAssertEqual(policy.tick(at: ms(20 + 1000)), .milliseconds(200), "the route got slower: relax")
        XCTAssertTrue(policy.isLearning)
        XCTAssertNil(policy.tick(at: ms(5000)), "learning: nothing to relax")
        for rtt in [80.0, 90, 100, 110] { XCTAssertNil(policy.accepted(roundTrip: ms(rtt), at: ms(5000))) }
        XCTAssertEqual(policy.accepted(roundTrip: ms(85), at: ms(5005)), ms(100), "the slower link: 80 + 2 × (90 − 80)")
    }

    func testTicksWhileExchangesArriveChangeNothing() {
        var policy = learnt()
        for step in 0..<20 {
            let now = ms(100 + Double(step) * 250)
            _ = policy.accepted(roundTrip: ms(40), at: now)
            XCTAssertNil(policy.tick(at: now + ms(200)))
        }
        XCTAssertEqual(policy.limit, ms(50))
    }
}
