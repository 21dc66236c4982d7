import Coordination
import XCTest

/// How long a barrier waits for readiness, and how often the medium tries to bring back a participant it left
/// behind. Pure: no pipeline, no daemon, no clock.
final class ReadinessPolicyTests: XCTestCase {
    let policy = ReadinessPolicy()

    func testNobodyReadyYetWaitsTheWholeLimit() {
        XCTAssertEqual(policy.deadline(readyAfter: []), .seconds(10))
        XCTAssertFalse(policy.stopsWaiting(expecting: 3, readyAfter: [], elapsed: .milliseconds(9_999)))
        XCTAssertTrue(policy.stopsWaiting(expecting: 3, readyAfter: [], elapsed: .seconds(10)))
    }

    func testEarlyReadinessStillGivesEveryoneTheMinimumWait() {
        // The others were ready after 0.3 s: a straggler still gets 4 s from the command, not 0.3 + 2 s.
        XCTAssertEqual(policy.deadline(readyAfter: [.milliseconds(200), .milliseconds(300)]), .seconds(4))
        XCTAssertFalse(policy.stopsWaiting(expecting: 3, readyAfter: [.milliseconds(200), .milliseconds(300)],
                                           elapsed: .milliseconds(3_999)))
        XCTAssertTrue(policy.stopsWaiting(expecting: 3, readyAfter: [.milliseconds(200), .milliseconds(300)],
                                          elapsed: .seconds(4)))
    }

    func testTheWaitFollowsProgressTheStragglersGetTheGraceAfterTheLatestReady() {
        // A loaded machine: participants get ready one after another; the wait moves with them.
        XCTAssertEqual(policy.deadline(readyAfter: [.seconds(1), .milliseconds(3_500)]), .milliseconds(5_500))
        XCTAssertEqual(policy.deadline(readyAfter: [.milliseconds(3_500), .seconds(1), .seconds(5)]), .seconds(7))
        XCTAssertFalse(policy.stopsWaiting(expecting: 4, readyAfter: [.seconds(1), .seconds(5)], elapsed: .milliseconds(6_900)))
    }

    func testNobodyIsWaitedForLongerThanTheLimit() {
        XCTAssertEqual(policy.deadline(readyAfter: [.seconds(9)]), .seconds(10))
        var short = ReadinessPolicy()
        short.limit = .seconds(3)
        XCTAssertEqual(short.deadline(readyAfter: [.milliseconds(100)]), .seconds(3), "the minimum wait is not above the limit")
    }

    func testEveryoneReadyStopsTheWaitAtOnce() {
        XCTAssertTrue(policy.stopsWaiting(expecting: 2, readyAfter: [.milliseconds(10), .milliseconds(20)],
                                          elapsed: .milliseconds(20)))
    }

    func testBringingBackWaitsLongerAfterEachFailedAttemptUpToTheMaximum() {
        let delays = (0..<8).map { policy.retryDelay(afterFailedAttempts: $0) }
        XCTAssertEqual(delays, [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        XCTAssertEqual(policy.retryDelay(afterFailedAttempts: 1_000), .seconds(30), "no overflow after many failures")
    }
}
