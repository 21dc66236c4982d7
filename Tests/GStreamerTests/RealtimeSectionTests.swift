import Glibc
import GStreamer
import XCTest

/// A `RealtimeSection` runs its body with the calling thread at SCHED_FIFO and gives the thread its own policy
/// back afterwards (the medium uses it on a shared cooperative-pool thread).
final class RealtimeSectionTests: XCTestCase {
    private func policy() -> (policy: Int32, priority: Int32) {
        var policy: Int32 = 0
        var parameters = sched_param()
        XCTAssertEqual(pthread_getschedparam(pthread_self(), &policy, &parameters), 0)
        return (policy, parameters.sched_priority)
    }

    func testTheBodyRunsRealtimeAndTheThreadGetsItsPolicyBack() throws {
        let before = policy()
        XCTAssertEqual(before.policy, Int32(SCHED_OTHER), "the test thread starts with normal scheduling")
        let inside = RealtimeSection.run(priority: 12) { policy() }
        XCTAssertEqual(inside.policy, Int32(SCHED_FIFO),
                       "SCHED_FIFO refused: the tests run as root (or with an rtprio limit) so that it is granted")
        XCTAssertEqual(inside.priority, 12)
        let after = policy()
        XCTAssertEqual(after.policy, before.policy, "the thread kept real-time priority after the section")
        XCTAssertEqual(after.priority, before.priority)
    }

    func testAThrowingBodyStillGivesThePolicyBack() {
        struct Failure: Error {}
        let before = policy()
        XCTAssertThrowsError(try RealtimeSection.run { () throws -> Void in throw Failure() })
        XCTAssertEqual(policy().policy, before.policy)
    }
}
