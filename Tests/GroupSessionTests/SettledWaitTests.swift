import GStreamer
import Synchronization
import XCTest
@testable import GroupSession

/// A link's bounded wait for a settled net clock (`MemberSession.SettledWait`): every view of the link waits for
/// the one answer, the limit is waited once, and the answer is said in one line. Pure: the clock's statistics are
/// fed by the test.
final class SettledWaitTests: XCTestCase {
    private func observation(offsetMicroseconds: Int64) -> NetClockStatistics {
        NetClockStatistics(synchronised: true, roundTrip: .milliseconds(45), roundTripAverage: .milliseconds(45),
                           discontinuity: .zero, rSquared: 0.9, nextPoll: .milliseconds(20),
                           localClockOffset: .microseconds(offsetMicroseconds))
    }

    func testViewsOfALinkShareOneBoundedWaitAndItIsSaidOnce() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream)   // window 8, spread 1 ms
        for k in 0..<12 { feed.yield(observation(offsetMicroseconds: k % 2 == 0 ? 0 : 3000)) }
        let lines = Mutex<[String]>([])
        let wait = MemberSession.SettledWait(limit: .milliseconds(200)) { line in lines.withLock { $0.append(line) } }

        let started = ContinuousClock.now
        async let first = wait.value(settlement)
        async let second = wait.value(settlement)
        let answers = await [first, second]
        let took = ContinuousClock.now - started
        XCTAssertGreaterThanOrEqual(took, .milliseconds(200), "the limit is waited")
        XCTAssertEqual(answers, Array(repeating: .notSettled(spread: .milliseconds(3), accepted: 12, observed: 12), count: 2))
        let again = ContinuousClock.now
        let third = await wait.value(settlement)
        XCTAssertEqual(third, answers[0], "a later view gets the same answer")
        XCTAssertLessThan(ContinuousClock.now - again, .milliseconds(150), "at once: the limit is not waited again")
        XCTAssertEqual(lines.withLock { $0 }, ["group session: net clock not settled after 0.2 s (offsets within 3.00 ms"
                                               + " over the last window, 12 of 12 exchanges accepted): the views join on it"])
        feed.finish()
    }

    func testASettledClockIsSaidAsSettled() async {
        let (stream, feed) = AsyncStream<NetClockStatistics>.makeStream()
        let settlement = NetClockSettlement(statistics: stream, criteria: .init(window: 3, spread: .microseconds(200)))
        for offset: Int64 in [900, 100, 150, 120] { feed.yield(observation(offsetMicroseconds: offset)) }
        let lines = Mutex<[String]>([])
        let wait = MemberSession.SettledWait(limit: .seconds(30)) { line in lines.withLock { $0.append(line) } }
        let answer = await wait.value(settlement)
        XCTAssertEqual(answer, .settled(.init(observed: 4, accepted: 4, spread: .microseconds(50))))
        XCTAssertEqual(lines.withLock { $0 }, ["group session: net clock settled after 4 exchanges (offsets within 0.05 ms)"])
        let none = await wait.value(nil)
        XCTAssertNil(none, "no net clock: nothing to wait for")
        feed.finish()
    }
}
