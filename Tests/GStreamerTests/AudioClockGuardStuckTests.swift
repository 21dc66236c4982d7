import CGStreamer
import Dispatch
import Foundation
@testable import GStreamer
import Synchronization
import XCTest

/// A sink clock function that answers `value` at once, or blocks until released while `blocked` is set (as
/// pulsesink's does in PulseAudio's mainloop lock once the daemon is gone). Counts its calls.
private enum FakeSinkClock {
    static let value = Atomic<UInt64>(1_000_000_000)
    static let blocked = Atomic<Bool>(false)
    static let calls = Atomic<Int>(0)
    static let release = DispatchSemaphore(value: 0)
    static let function: GstAudioClockGetTimeFunc = { _, _ in
        calls.add(1, ordering: .relaxed)
        if blocked.load(ordering: .acquiring) { release.wait() }
        return GstClockTime(value.load(ordering: .acquiring))
    }
}

/// `AudioClockGuard` around a sink clock that stops answering: no pipeline, no daemon (milliseconds). The real
/// pulsesink with its daemon killed is `AudioServerKillTests` (RoutingTests).
final class AudioClockGuardStuckTests: XCTestCase {
    override func setUp() {
        FakeSinkClock.blocked.store(false, ordering: .releasing)
        FakeSinkClock.value.store(1_000_000_000, ordering: .releasing)
    }

    private func makeGuard() -> AudioClockGuard {
        AudioClockGuard(original: FakeSinkClock.function, data: nil, destroy: nil, window: .milliseconds(100))
    }

    func testReadingsDoNotQueueBehindACallStuckInTheSinksClock() {
        let guardian = makeGuard()
        XCTAssertEqual(guardian.time(nil), 1_000_000_000, "an answering sink is asked")
        FakeSinkClock.blocked.store(true, ordering: .releasing)
        let stuckReturned = XCTestExpectation(description: "the stuck call returns once released")
        Thread.detachNewThread {
            _ = guardian.time(nil)   // blocks inside the sink's function
            stuckReturned.fulfill()
        }
        Thread.sleep(forTimeInterval: Double(AudioClockGuard.stuckAfter / .milliseconds(1)) / 1000 + 0.05)
        // Every other reader (streaming threads) is answered at once, by extrapolation, running forward.
        let calls = FakeSinkClock.calls.load(ordering: .acquiring)
        let start = ContinuousClock.now
        let readings = Mutex<[GstClockTime]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let t = guardian.time(nil)
            readings.withLock { $0.append(t) }
        }
        let took = (ContinuousClock.now - start) / .seconds(1)
        XCTAssertLessThan(took, 0.5, "readers waited for the stuck call")
        XCTAssertEqual(FakeSinkClock.calls.load(ordering: .acquiring), calls, "a reader called into the stuck sink")
        XCTAssertEqual(guardian.unansweredReadings, 8)
        for t in readings.withLock({ $0 }) {
            XCTAssertGreaterThan(t, 1_000_000_000 + 50_000_000, "the last reading plus the time since")
            XCTAssertLessThan(t, 1_000_000_000 + 5_000_000_000)
        }
        // Released, the sink is asked again.
        FakeSinkClock.blocked.store(false, ordering: .releasing)
        FakeSinkClock.release.signal()
        wait(for: [stuckReturned], timeout: 2)
        FakeSinkClock.value.store(7_000_000_000, ordering: .releasing)
        XCTAssertEqual(guardian.time(nil), 7_000_000_000)
    }

    func testAnAbandonedSinksClockIsNeverCalledAgain() {
        let guardian = makeGuard()
        XCTAssertEqual(guardian.time(nil), 1_000_000_000)
        guardian.abandon()
        let calls = FakeSinkClock.calls.load(ordering: .acquiring)
        Thread.sleep(forTimeInterval: 0.02)
        let t = guardian.time(nil)
        XCTAssertEqual(FakeSinkClock.calls.load(ordering: .acquiring), calls)
        XCTAssertGreaterThan(t, 1_000_000_000 + 15_000_000, "extrapolated from the last reading")
    }

    func testAQuickSinkIsAlwaysAsked() {
        let guardian = makeGuard()
        let calls = FakeSinkClock.calls.load(ordering: .acquiring)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in _ = guardian.time(nil) }
        XCTAssertEqual(FakeSinkClock.calls.load(ordering: .acquiring) - calls, 50)
        XCTAssertEqual(guardian.unansweredReadings, 0)
    }
}
