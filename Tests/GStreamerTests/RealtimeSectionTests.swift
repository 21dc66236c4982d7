import Foundation
import Glibc
import GStreamer
import Synchronization
import XCTest

/// A `RealtimeSection` runs its body with the calling thread at SCHED_FIFO and gives the thread its own policy
/// back afterwards (the medium uses it on a shared cooperative-pool thread).
final class RealtimeSectionTests: XCTestCase {
    /// Linux's SCHED_RESET_ON_FORK flag, or-ed into the policy the kernel reports.
    private let resetOnFork: Int32 = 0x4000_0000

    private func policy() -> (policy: Int32, priority: Int32) {
        var policy: Int32 = 0
        var parameters = sched_param()
        XCTAssertEqual(pthread_getschedparam(pthread_self(), &policy, &parameters), 0)
        return (policy & ~resetOnFork, parameters.sched_priority)
    }

    /// A thread started inside the section does not inherit its real-time policy: libdispatch starts pool threads
    /// from whichever thread enqueues work, and those threads ran SCHED_FIFO for good (seen on cold test runs).
    func testAThreadStartedInsideTheSectionRunsAtNormalPriority() {
        let seen = Mutex<Int32?>(nil)
        let started = DispatchSemaphore(value: 0)
        let inside = RealtimeSection.run(priority: 12) { () -> Int32 in
            let child = Thread {
                // The kernel's policy of the calling thread (0 = itself), flags included.
                seen.withLock { $0 = sched_getscheduler(0) }
                started.signal()
            }
            child.start()
            return sched_getscheduler(0)
        }
        XCTAssertEqual(inside & ~resetOnFork, Int32(SCHED_FIFO), "SCHED_FIFO refused: the tests run as root")
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success, "the child thread never ran")
        XCTAssertEqual(seen.withLock { $0 }, Int32(SCHED_OTHER), "a thread started by the real-time section inherited its policy")
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
