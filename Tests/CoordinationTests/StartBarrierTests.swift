import Foundation
import GStreamer
import Synchronization
import XCTest
@testable import Coordination

/// The last participant to be ready starts everyone, once, at one instant; a barrier that cannot or must not
/// fire leaves the start to the medium. Pure logic with fake starts (the real path: SinksFirstStartTests).
final class StartBarrierTests: XCTestCase {
    final class FakeStart: PreparedStart {
        let instants = Mutex<[ClockTime]>([])
        func start(at clockTime: ClockTime) -> Bool {
            instants.withLock { $0.append(clockTime) }
            return true
        }
        var started: [ClockTime] { instants.withLock { $0 } }
    }

    let clock = Clock.systemClock()
    let ids = [ParticipantID("a"), ParticipantID("b"), ParticipantID("c")]

    func testTheLastArrivalStartsEveryoneAtOneInstantAheadOfIt() throws {
        let barrier = StartBarrier(expecting: ids, clock: clock, margin: .milliseconds(2))
        let starts = ids.map { _ in FakeStart() }
        barrier.arrive(ids[0], start: starts[0])
        barrier.arrive(ids[1], start: starts[1])
        XCTAssertTrue(starts.allSatisfy { $0.started.isEmpty }, "started before the last participant was ready")
        let before = clock.time
        barrier.arrive(ids[2], start: starts[2])
        let fired = try XCTUnwrap(barrier.cancel().fired, "the last arrival did not start the group")
        XCTAssertEqual(starts.map(\.started), Array(repeating: [fired.start], count: 3), "one instant for all")
        XCTAssertGreaterThanOrEqual(fired.start, before + .milliseconds(2))
        XCTAssertGreaterThan(fired.lead, .zero)
        XCTAssertLessThanOrEqual(fired.lead, .milliseconds(2))
        barrier.arrive(ids[2], start: starts[2])
        XCTAssertEqual(starts[2].started.count, 1, "a second arrival started it again")
    }

    func testAParticipantWithoutAPreparedStartLeavesTheStartToTheMedium() {
        let barrier = StartBarrier(expecting: ids, clock: clock, margin: .milliseconds(2))
        let starts = [FakeStart(), FakeStart()]
        barrier.arrive(ids[0], start: starts[0])
        barrier.arrive(ids[1], start: nil)
        barrier.arrive(ids[2], start: starts[1])
        let outcome = barrier.cancel()
        XCTAssertNil(outcome.fired)
        XCTAssertTrue(starts.allSatisfy { $0.started.isEmpty })
        XCTAssertEqual(Set(outcome.starts.keys), [ids[0], ids[2]], "the medium gets the starts that did arrive")
    }

    func testACancelledOrPausedBarrierNeverFires() {
        let superseded = StartBarrier(expecting: ids, clock: clock, margin: .milliseconds(2))
        let paused = StartBarrier(expecting: ids, clock: clock, margin: .milliseconds(2), fires: false)
        let starts = ids.map { _ in FakeStart() }
        superseded.arrive(ids[0], start: starts[0])
        superseded.cancel()
        for (id, start) in zip(ids, starts) {
            superseded.arrive(id, start: start)
            paused.arrive(id, start: start)
        }
        XCTAssertNil(superseded.cancel().fired)
        XCTAssertNil(paused.cancel().fired)
        XCTAssertTrue(starts.allSatisfy { $0.started.isEmpty }, "a barrier that must not fire started someone")
    }
}
