import XCTest
@testable import Multiview

/// The player's ASYNC_DONE waiters, without a pipeline: a waiter that stores its continuation a job after it asked
/// (the player's queue can run other jobs in between, see `PlayerExecutor`) still sees a wake-up or a timeout that
/// came in between.
final class AsyncDoneWaitersTests: XCTestCase {
    private struct Timeout: Error {}
    private struct Failed: Error {}

    /// Stores a continuation for `ticket` as the player does. Returns whether it was stored (it then waits: it is
    /// woken at once, so that a wrong answer fails the test instead of hanging it) and how it ended.
    private func store(_ waiters: inout AsyncDoneWaiters, _ ticket: AsyncDoneWaiters.Ticket,
                       failure: Error? = nil) async -> (stored: Bool, error: Error?) {
        var stored = false
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let before = waiters.count
                waiters.store(continuation, for: ticket, failure: failure)
                stored = waiters.count > before
                if stored { waiters.wakeAll() }
            }
            return (stored, nil)
        } catch {
            return (stored, error)
        }
    }

    func testAWakeUpBeforeTheContinuationIsStoredIsNotMissed() async {
        var waiters = AsyncDoneWaiters()
        let ticket = waiters.ticket()
        waiters.wakeAll()
        let (stored, error) = await store(&waiters, ticket)
        XCTAssertFalse(stored, "stored: it would have waited for a wake-up that had already come")
        XCTAssertNil(error, "woken by ASYNC_DONE, not an error")
        XCTAssertEqual(waiters.count, 0)
    }

    func testAFailureBeforeTheContinuationIsStoredIsThrown() async {
        var waiters = AsyncDoneWaiters()
        let ticket = waiters.ticket()
        waiters.wakeAll(with: Failed())
        let (stored, error) = await store(&waiters, ticket, failure: Failed())
        XCTAssertFalse(stored)
        XCTAssertTrue(error is Failed, "expected the player's failure, got \(String(describing: error))")
    }

    func testATimeoutBeforeTheContinuationIsStoredIsThrown() async {
        var waiters = AsyncDoneWaiters()
        let ticket = waiters.ticket()
        waiters.expire(ticket.id, error: Timeout())
        let (stored, error) = await store(&waiters, ticket)
        XCTAssertFalse(stored)
        XCTAssertTrue(error is Timeout, "expected the timeout, got \(String(describing: error))")
    }

    func testAWaiterWithNothingSinceItsTicketIsStoredAndAnOlderTicketsTimeoutIsMoot() async {
        var waiters = AsyncDoneWaiters()
        let older = waiters.ticket()
        let ticket = waiters.ticket()
        waiters.expire(older.id, error: Timeout())   // an older waiter's timer firing late: not this waiter's
        let (stored, error) = await store(&waiters, ticket)
        XCTAssertTrue(stored, "nothing had happened since the ticket: the waiter must wait")
        XCTAssertNil(error, "it was woken by the wake-up, not by the older ticket's timeout")
        XCTAssertEqual(waiters.count, 0, "woken waiters are removed")
    }

    func testAStoredWaiterEndsAtItsOwnTimeout() async {
        var waiters = AsyncDoneWaiters()
        let ticket = waiters.ticket()
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                waiters.store(continuation, for: ticket, failure: nil)
                XCTAssertEqual(waiters.count, 1)
                waiters.expire(ticket.id, error: Timeout())
            }
            XCTFail("a timed-out waiter must throw")
        } catch {
            XCTAssertTrue(error is Timeout, "\(error)")
        }
        XCTAssertEqual(waiters.count, 0)
    }
}
