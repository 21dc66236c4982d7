import Priority
import XCTest

/// `SharedLinkEstimator` on synthetic traces (`LinkTraceSimulator`): no pipeline, no daemon, milliseconds.
final class SharedLinkEstimatorTests: XCTestCase {
    typealias View = LinkTraceSimulator.ViewModel
    /// 2 s fragments of the HLS set's rungs (bytes).
    static let floor = 700_000 / 4, middle = 2_850_000 / 4, top = 5_470_000 / 4

    private func run(rate: @escaping @Sendable (Double) -> Double, _ views: [View], until end: Double,
                     coalesce: Int = 1, configuration: SharedLinkEstimator.Configuration = .init())
        -> [(time: Double, estimate: SharedLinkEstimator.Estimate?)] {
        var simulator = LinkTraceSimulator(rate: rate)
        simulator.coalesce = coalesce
        let arrivals = simulator.run(views, until: end)
        var estimator = SharedLinkEstimator(configuration: configuration)
        return replay(arrivals, into: &estimator, until: end)
    }

    private func estimate(at time: Double, _ trace: [(time: Double, estimate: SharedLinkEstimator.Estimate?)]) -> SharedLinkEstimator.Estimate? {
        trace.last { $0.time <= time + 1e-9 }?.estimate
    }

    private func assertNear(_ value: Int?, _ expected: Double, within fraction: Double, _ what: String,
                            file: StaticString = #filePath, line: UInt = #line) {
        guard let value else { return XCTFail("\(what): no estimate", file: file, line: line) }
        XCTAssertEqual(Double(value), expected, accuracy: expected * fraction, "\(what): \(value)", file: file, line: line)
    }

    func testOverlappingDownloadsAddUpToTheLink() {
        // Four views downloading back to back at the same time: each sees a quarter, together the link.
        let views = (1...4).map { View(view: $0, fragmentBytes: Self.middle, period: 0) }
        let trace = run(rate: { _ in 7e6 }, views, until: 12)
        let e = estimate(at: 12, trace)
        assertNear(e?.bitsPerSecond, 7e6, within: 0.05, "overlapping")
        XCTAssertEqual(e?.isConfident, true)
    }

    func testChunksMergedByABusyDemuxerThreadStillMeasureTheLink() {
        // A demuxer thread that falls behind hands over 2 or 3 blocks at once (seen on GStreamer 1.22 over a
        // tbf link: 65536, 98304, 131072-byte chunks): they continue the transfer, only a remainder ends it.
        let views = (1...4).map { View(view: $0, fragmentBytes: Self.middle + 5000, period: 2, start: 0.2 * Double($0)) }
        for coalesce in [2, 3] {
            let trace = run(rate: { _ in 7e6 }, views, until: 20, coalesce: coalesce)
            assertNear(estimate(at: 20, trace)?.bitsPerSecond, 7e6, within: 0.08, "coalescing \(coalesce)")
        }
    }

    func testOnOffPlayersAreNotMistakenForASlowLink() {
        // One capped view: a 0.7 Mbit/s fragment every 2 s over a 7 Mbit/s link is busy 10 % of the time. Bytes
        // over wall time would say 0.7 Mbit/s (the ON-OFF trap); bytes over busy time says the link.
        let trace = run(rate: { _ in 7e6 }, [View(view: 1, fragmentBytes: Self.floor, period: 2)], until: 40)
        let e = estimate(at: 40, trace)
        assertNear(e?.bitsPerSecond, 7e6, within: 0.08, "ON-OFF")
        // 10 % busy: ~2 s of busy time within the 20 s horizon (first chunks left out): confident, not full.
        XCTAssertEqual(e?.isConfident, true, "\(String(describing: e))")
        XCTAssertLessThan(e?.confidence ?? 1, 1)
    }

    func testDownloadsTakingTurnsAreNotCountedSeveralTimes() {
        // Four views whose downloads do not overlap: each alone sees the whole link; the sum of per-view
        // measurements (what hlsdemux2's current-bandwidth gives) would be 4 × 7 Mbit/s.
        let views = (1...4).map { View(view: $0, fragmentBytes: Self.floor, period: 2, start: Double($0 - 1) * 0.5) }
        let trace = run(rate: { _ in 7e6 }, views, until: 20)
        assertNear(estimate(at: 20, trace)?.bitsPerSecond, 7e6, within: 0.08, "taking turns")
    }

    func testAnIdleViewDoesNotLowerTheEstimate() {
        // Views 1–3 download; view 4 finished early and idles for the rest of the run.
        var views = (1...3).map { View(view: $0, fragmentBytes: Self.middle, period: 2) }
        views.append(View(view: 4, fragmentBytes: Self.floor, period: 2, stop: 4))
        let trace = run(rate: { _ in 7e6 }, views, until: 30)
        for t in stride(from: 10.0, through: 30, by: 5) {
            assertNear(estimate(at: t, trace)?.bitsPerSecond, 7e6, within: 0.08, "idle view, t=\(t)")
        }
    }

    func testAShrinkingLinkIsBelievedWithinSeconds() {
        // 7 → 3.5 Mbit/s at t = 20 while three views keep downloading.
        let views = (1...3).map { View(view: $0, fragmentBytes: Self.middle, period: 2) }
        let trace = run(rate: { $0 < 20 ? 7e6 : 3.5e6 }, views, until: 30)
        assertNear(estimate(at: 19.5, trace)?.bitsPerSecond, 7e6, within: 0.08, "before the shrink")
        let after = trace.first { $0.time > 20 && ($0.estimate?.bitsPerSecond ?? .max) <= Int(3.5e6 * 1.1) }
        XCTAssertNotNil(after, "the estimate never came down to 3.5 Mbit/s")
        XCTAssertLessThanOrEqual(after?.time ?? .infinity, 24, "came down only at \(after?.time ?? -1) s")
        assertNear(estimate(at: 30, trace)?.bitsPerSecond, 3.5e6, within: 0.08, "after the shrink")
    }

    func testAGrowingLinkIsBelievedStepByStepWithoutOvershoot() {
        // 3.5 → 9 Mbit/s at t = 20.
        let views = (1...3).map { View(view: $0, fragmentBytes: Self.top, period: 0) }
        let trace = run(rate: { $0 < 20 ? 3.5e6 : 9e6 }, views, until: 40)
        assertNear(estimate(at: 19.5, trace)?.bitsPerSecond, 3.5e6, within: 0.08, "before the growth")
        // Slowly up: one second after the change the published estimate has risen by at most riseRate.
        let soon = estimate(at: 21, trace)?.bitsPerSecond ?? 0
        XCTAssertLessThanOrEqual(Double(soon), 3.5e6 * 1.08 * 1.15 * 1.15, "rose too fast: \(soon)")
        let risen = trace.first { $0.time > 20 && ($0.estimate?.bitsPerSecond ?? 0) >= Int(9e6 * 0.9) }
        XCTAssertNotNil(risen, "never rose to 9 Mbit/s")
        XCTAssertLessThanOrEqual(risen?.time ?? .infinity, 32, "rose only at \(risen?.time ?? -1) s")
        let peak = trace.compactMap { $0.estimate?.bitsPerSecond }.max() ?? 0
        XCTAssertLessThanOrEqual(Double(peak), 9e6 * 1.05, "overshoot: \(peak)")
    }

    func testASteadyLinkWithCappedPlayersGivesASteadyEstimate() {
        // Demand (4 capped views, 1 × 2.85 + 3 × 0.7 Mbit/s) below a 7 Mbit/s link, ON-OFF: the published
        // estimate must not swing (an allocation following it would oscillate).
        var views = [View(view: 1, fragmentBytes: Self.middle, period: 2)]
        views += (2...4).map { View(view: $0, fragmentBytes: Self.floor, period: 2, start: 0.3 * Double($0)) }
        let trace = run(rate: { _ in 7e6 }, views, until: 60)
        let settled = trace.filter { $0.time >= 10 }.compactMap { $0.estimate?.bitsPerSecond }
        XCTAssertFalse(settled.isEmpty)
        XCTAssertGreaterThanOrEqual(Double(settled.min() ?? 0), 7e6 * 0.92, "dipped: \(settled.min() ?? 0)")
        XCTAssertLessThanOrEqual(Double(settled.max() ?? 0), 7e6 * 1.05, "peaked: \(settled.max() ?? 0)")
    }

    func testTheFirstConfidentFigureIsNotHeldBackByAnUnconfidentStart() {
        // Startup: the first measurements rest on a few chunks and read low; the figure must not then climb
        // from them at the slow rise rate.
        var estimator = SharedLinkEstimator()
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(0))
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(200))   // 1.3 Mbit/s, 0.2 s busy
        XCTAssertEqual(estimator.update(now: .milliseconds(250))?.isConfident, false)
        let arrivals = LinkTraceSimulator(rate: { _ in 7e6 }).run([View(view: 2, fragmentBytes: 4_000_000, period: 0)], until: 3)
        for a in arrivals { estimator.received(bytes: a.bytes, stream: a.view, at: .milliseconds(300) + .nanoseconds(Int64(a.time * 1e9))) }
        let e = estimator.update(now: .milliseconds(3300))
        XCTAssertEqual(e?.isConfident, true)
        assertNear(e?.bitsPerSecond, 7e6, within: 0.15, "first confident figure")
    }

    func testConfidenceGrowsWithBusyTime() {
        var estimator = SharedLinkEstimator()
        XCTAssertNil(estimator.update(now: .seconds(1)), "an estimate from nothing")
        // One view, 7 Mbit/s, 1 s of transfer: a third of the 3 s window, below the half needed.
        let arrivals = LinkTraceSimulator(rate: { _ in 7e6 }).run([View(view: 1, fragmentBytes: 875_000, period: 100)], until: 1.2)
        let trace = replay(arrivals, into: &estimator, until: 1.5)
        let e = trace.last?.estimate
        XCTAssertNotNil(e)
        XCTAssertFalse(e?.isConfident ?? true)
        XCTAssertEqual(e?.confidence ?? 0, 1.0 / 3, accuracy: 0.05)
        // Nothing downloaded for longer than the horizon: the last figure stays, with no confidence.
        let later = estimator.update(now: .seconds(40))
        XCTAssertEqual(later?.confidence, 0)
        XCTAssertEqual(later?.bitsPerSecond, e?.bitsPerSecond)
    }

    func testFirstChunkOfATransferIsCountedAtItsSuccessorsPace() {
        // The time before a transfer's first chunk holds the request's latency and idle time: the chunk is counted
        // once the second shows the pace, as if it came at that pace. A transfer of one chunk tells nothing.
        var estimator = SharedLinkEstimator()
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(0))     // first: waits for the pace
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(100))   // [0, 100] and the first at [-100, 0]
        estimator.received(bytes: 1000, stream: 1, at: .milliseconds(110))    // not whole blocks: ends the transfer
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(900))   // first of the next: waits
        estimator.received(bytes: 32768, stream: 1, at: .milliseconds(4000))  // 3 s later: a new transfer, waits
        let e = estimator.update(now: .milliseconds(4000))
        XCTAssertNotNil(e)
        let expected = Double(32768 * 2 + 1000) * 8 / 0.210
        XCTAssertEqual(Double(e?.measured ?? 0), expected, accuracy: expected * 0.01)
    }
    func testTailsHandedOverLateDoNotPullTheEstimateDown() {
        // Settled views on 7 Mbit/s (the high one on 720p, three lows on 360p: ON-OFF, fragments of 2 s), each
        // transfer's last chunk handed over 0.5 s late: a demuxer thread starved of CPU (a loaded CI machine),
        // or a retransmission timeout on the tail. The link carried nothing of the transfer meanwhile; counted as
        // busy time the late tails made 5.1 Mbit/s of it (27 % low) before a tail was held to twice its transfer's
        // pace; 6.2 now (the two-fold margin keeps part of each delay).
        let views = [View(view: 1, fragmentBytes: Self.middle, period: 2, start: 0.1)]
            + (2...4).map { View(view: $0, fragmentBytes: Self.floor, period: 2, start: 0.5 * Double($0) - 0.4) }
        let arrivals = LinkTraceSimulator(rate: { _ in 7e6 }).run(views, until: 30)
        let late = arrivals.map { a in
            LinkTraceSimulator.Arrival(view: a.view, bytes: a.bytes, time: a.bytes % 32768 == 0 ? a.time : a.time + 0.5)
        }.sorted { $0.time < $1.time }
        var estimator = SharedLinkEstimator()
        let trace = replay(late, into: &estimator, until: 30)
        for t in stride(from: 10.0, through: 30, by: 2) {
            assertNear(estimate(at: t, trace)?.measured, 7e6, within: 0.15, "late tails, at \(t) s")
        }
    }
}
