import Clocks
import Synchronization
import XCTest
@testable import Coordination

/// `withDeadline` and `stopwatch` on an injected clock: a body that ends in time gives its result or its error; one
/// that does not is cancelled and fails with `DeadlineExceeded` once it has ended. Pure: a `TestClock`, no pipeline.
final class DeadlineTests: XCTestCase {
    func testABodyThatEndsInTimeGivesItsResult() async throws {
        let clock = TestClock()
        let start = clock.now
        let value = try await withDeadline(.seconds(5), on: clock) { 42 }
        XCTAssertEqual(value, 42)
        XCTAssertEqual(start.duration(to: clock.now), .zero, "no time had to pass")
    }

    func testABodysOwnErrorIsThrownAsItIs() async {
        struct BodyFailed: Error, Equatable {}
        let clock = TestClock()
        do {
            _ = try await withDeadline(.seconds(5), on: clock) { () async throws -> Int in throw BodyFailed() }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error as? BodyFailed, BodyFailed())
        }
    }

    func testABodyOverItsLimitIsCancelledAndEndsBeforeTheErrorIsThrown() async throws {
        let clock = TestClock()
        let start = clock.now
        let started = Mutex(false), ended = Mutex(false), finished = Mutex(false)
        let run = Task {
            defer { finished.withLock { $0 = true } }
            return try await withDeadline(.seconds(5), on: clock) { () async throws -> Int in
                started.withLock { $0 = true }
                defer { ended.withLock { $0 = true } }
                try await clock.sleep(for: .seconds(3600))
                return 1
            }
        }
        await until("the body runs") { started.withLock { $0 } }
        for _ in 0..<30 where !finished.withLock({ $0 }) {
            await clock.advance(by: .seconds(1))
        }
        do {
            _ = try await run.value
            XCTFail("the body ran an hour and no deadline fired")
        } catch {
            XCTAssertEqual(error as? DeadlineExceeded, DeadlineExceeded(limit: .seconds(5)))
        }
        XCTAssertTrue(ended.withLock { $0 }, "the body had ended when the deadline error came")
        XCTAssertGreaterThanOrEqual(start.duration(to: clock.now), .seconds(5), "not before the limit")
        XCTAssertLessThan(start.duration(to: clock.now), .seconds(3600), "the body's own sleep never finished")
    }

    func testAStopwatchReadsTheTimeSinceItWasMade() async {
        let clock = TestClock()
        await clock.advance(by: .seconds(10))
        let elapsed = stopwatch(on: clock)
        XCTAssertEqual(elapsed(), .zero)
        await clock.advance(by: .milliseconds(1500))
        XCTAssertEqual(elapsed(), .milliseconds(1500))
        await clock.advance(by: .seconds(2))
        XCTAssertEqual(elapsed(), .milliseconds(3500), "each call reads the time since it was made")
    }
}
