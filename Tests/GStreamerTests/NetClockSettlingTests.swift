import GStreamer
import XCTest

/// Pure: when a net client clock counts as settled (`NetClockSettling`), and the settlement's waiters
/// (`NetClockSettlement` fed by a fake statistics stream). No clock, no network, no pipeline.
final class NetClockSettlingTests: XCTestCase {
    private func observation(offsetMicroseconds: Int64, synchronised: Bool = true) -> NetClockStatistics {
        NetClockStatistics(synchronised: synchronised, roundTrip: .milliseconds(45), roundTripAverage: .milliseconds(45),
                           discontinuity: .zero, rSquared: 0.9, nextPoll: .milliseconds(20),
                           localClockOffset: .microseconds(offsetMicroseconds))
    }

    func testAClockWhoseOffsetStillMovesIsNotSettledAndOneThatStoppedIs() {
        var settling = NetClockSettling(criteria: .init(window: 4, spread: .microseconds(500)))
        // Converging: 3 ms, 2 ms, 1.2 ms, 0.6 ms… (the first exchanges of a jittery link).
        for offset: Int64 in [3000, 2000, 1200, 600] { XCTAssertFalse(settling.observe(observation(offsetMicroseconds: offset))) }
        XCTAssertEqual(settling.lastSpread, .microseconds(2400))
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 400)), "1.6 ms over the last four")
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 300)))
        XCTAssertTrue(settling.observe(observation(offsetMicroseconds: 350)), "600, 400, 300, 350: within 0.5 ms")
        XCTAssertEqual(settling.lastSpread, .microseconds(300))
        XCTAssertEqual(settling.accepted, 7)
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 1400)), "a jump unsettles it again")
    }

    func testFewerObservationsThanTheWindowNeverSettle() {
        var settling = NetClockSettling(criteria: .init(window: 5, spread: .milliseconds(1)))
        for _ in 0..<4 { XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 100))) }
        XCTAssertNil(settling.lastSpread)
        XCTAssertTrue(settling.observe(observation(offsetMicroseconds: 100)))
    }

    func testAnObservationTheClockDidNotAcceptBreaksTheRun() {
        var settling = NetClockSettling(criteria: .init(window: 3, spread: .milliseconds(1)))
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 0)))
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 0)))
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 0, synchronised: false)), "a clamped step")
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 0)))
        XCTAssertFalse(settling.observe(observation(offsetMicroseconds: 0)), "two in a row since the break")
        XCTAssertTrue(settling.observe(observation(offsetMicroseconds: 0)))
        XCTAssertEqual(settling.observed, 6)
        XCTAssertEqual(settling.accepted, 5)
    }

    /// Loopback under load: GStreamer calls the exchanges not synchronised (their provider time a little outside
    /// a quarter round trip of the clock's readings), but they agree within the criteria's 250 µs: the window fills.
    /// One 400 µs off still breaks the run.
    func testExchangesThatAgreeWithinTheFloorCountThoughGStreamerDidNotSynchronise() {
        var settling = NetClockSettling(criteria: .init(window: 3, spread: .milliseconds(1)))
        func loopback(minError: Int64, maxError: Int64) -> NetClockStatistics {
            NetClockStatistics(synchronised: false, roundTrip: .microseconds(140), roundTripAverage: .microseconds(140),
                               discontinuity: .zero, rSquared: 0.99, nextPoll: .milliseconds(5),
                               localClockOffset: .microseconds(10), remoteMinError: .microseconds(minError),
                               remoteMaxError: .microseconds(maxError))
        }
        XCTAssertFalse(settling.observe(loopback(minError: 60, maxError: 200)))
        XCTAssertFalse(settling.observe(loopback(minError: -300, maxError: -100)))
        XCTAssertTrue(settling.observe(loopback(minError: 100, maxError: 240)), "three in a row within 250 µs")
        XCTAssertFalse(settling.observe(loopback(minError: 400, maxError: 540)), "400 µs off breaks the run")
        XCTAssertEqual(settling.accepted, 3)
        XCTAssertEqual(NetClockSettling.Criteria().agreement, .microseconds(250))
    }

    func testWithoutAnOffsetTheStepsAddUp() {
        var settling = NetClockSettling(criteria: .init(window: 3, spread: .microseconds(500)))
        func step(_ microseconds: Int64) -> NetClockStatistics {
            NetClockStatistics(synchronised: true, roundTrip: .milliseconds(1), roundTripAverage: .milliseconds(1),
                               discontinuity: .microseconds(microseconds), rSquared: 1, nextPoll: .milliseconds(20))
        }
        XCTAssertFalse(settling.observe(step(0)))
        XCTAssertFalse(settling.observe(step(400)))
        XCTAssertFalse(settling.observe(step(400)), "0, 400, 800: moved 0.8 ms")
        XCTAssertTrue(settling.observe(step(0)), "400, 800, 800")
    }

    func testTheDefaultsAreTheMeasuredOnes() {
        XCTAssertEqual(NetClockSettling.Criteria(), .init(window: 8, spread: .milliseconds(1)))
        XCTAssertEqual(NetClockSettling.Criteria(window: 1).window, 2, "one observation cannot show a spread")
    }

    func testWaitersAreToldOnceTheClockSettledAndLaterOnesAtOnce() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream, criteria: .init(window: 3, spread: .microseconds(200)))
        let waiter = Task { await settlement.waitUntilSettled() }
        for offset: Int64 in [900, 500, 100, 150, 120] { feed.yield(observation(offsetMicroseconds: offset)) }
        let outcome = await waiter.value
        XCTAssertEqual(outcome, .init(observed: 5, accepted: 5, spread: .microseconds(50)))
        XCTAssertEqual(settlement.outcome, outcome)
        let again = await settlement.waitUntilSettled()
        XCTAssertEqual(again, outcome, "a settled clock is answered at once")
        feed.finish()
    }

    func testAClockThatGoesAwayUnsettledAnswersNil() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream, criteria: .init(window: 3, spread: .microseconds(200)))
        let waiter = Task { await settlement.waitUntilSettled() }
        for offset: Int64 in [3000, 1000] { feed.yield(observation(offsetMicroseconds: offset)) }
        feed.finish()
        let outcome = await waiter.value
        XCTAssertNil(outcome)
        XCTAssertNil(settlement.outcome)
    }

    func testACancelledWaiterIsAnsweredNil() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream)
        let waiter = Task { await settlement.waitUntilSettled() }
        waiter.cancel()
        let outcome = await waiter.value
        XCTAssertNil(outcome)
        feed.finish()
    }
    /// A clock whose offsets keep moving (a busy machine) is waited for no longer than the limit, and the answer
    /// says how far from settled it was; one that settles within the limit is answered settled.
    func testABoundedWaitEndsAtItsLimitWithHowFarTheClockWasFromSettled() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream, criteria: .init(window: 3, spread: .microseconds(200)))
        for offset: Int64 in [0, 900, 0, 900] { feed.yield(observation(offsetMicroseconds: offset)) }
        let started = ContinuousClock.now
        let wait = await settlement.waitUntilSettled(limit: .milliseconds(100))
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(100), "not before the limit")
        XCTAssertEqual(wait, .notSettled(spread: .microseconds(900), accepted: 4, observed: 4))
        XCTAssertNil(settlement.outcome, "giving up is not settling")

        for offset: Int64 in [100, 150, 120] { feed.yield(observation(offsetMicroseconds: offset)) }
        let settled = await settlement.waitUntilSettled(limit: .seconds(30))
        XCTAssertEqual(settled, .settled(.init(observed: 7, accepted: 7, spread: .microseconds(50))))
        feed.finish()
        let gone = NetClockSettlement(statistics: AsyncStream { $0.finish() })
        let answer = await gone.waitUntilSettled(limit: .seconds(30))
        XCTAssertEqual(answer, .gone, "a clock that went away is not waited for")
    }
}
