import Foundation
import GStreamer
import Multiview
import Priority
import Synchronization
import TestSupport
import XCTest

/// networkResourcePriority without `--bandwidth`: four HLS views (1 high, 3 low) at a 1280x720 tile over one
/// 7 Mbit/s link, real pipelines over real HTTP; the manager allocates by its own estimate of the shared link.
/// At that tile the views' useful rungs stop at 720p (2.85 Mbit/s): the high view's top. Generous timeouts; the
/// figures (time to top, utilisation, estimate error) are `Scripts/bench-hls`'s.
final class EstimatedLinkTests: XCTestCase {
    static let top = "1280x720"
    static let order = ["640x360", "960x540", "1280x720", "1920x1080"]

    struct Views {
        let manager: PriorityManager
        let players: [Player]
        let logs: [ResolutionLog]
        let counters: [StallCounter]
        let estimates: EstimateLog
        func stop() async { estimates.stop(); for p in players { await p.stop() } }
    }

    private func start(_ uri: (Int) -> String) async throws -> Views {
        let manager = PriorityManager(budget: nil)
        let estimates = EstimateLog(manager)
        var players: [Player] = [], logs: [ResolutionLog] = [], counters: [StallCounter] = []
        for n in 1...4 {
            let player = try makePlayer(n, name: "angle\(n)")
            let source = MediaSource(uri(n))
            await manager.attach(player, source: source, priority: n == 1 ? .high : .low, tileWidth: 1280, tileHeight: 720)
            counters.append(await StallCounter(player))
            logs.append(ResolutionLog(player))
            try await player.load(source)
            players.append(player)
        }
        let all = players
        await withTaskGroup(of: Void.self) { group in
            for player in all { group.addTask { try? await player.play(timeout: .seconds(40)) } }
        }
        return Views(manager: manager, players: players, logs: logs, counters: counters, estimates: estimates)
    }

    /// Waits until the views have settled (an event; 60 s at most: four HLS views start slowly on a cold, loaded
    /// machine); fails with the rungs, the link and the logs when they do not; the confident estimate then must
    /// come within 25 % of the link's 7 Mbit/s of `expected` (30 s at most). Both failures carry the estimator's
    /// history.
    private func assertSettles(_ views: Views, estimate expected: Double, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) async {
        let isSettled = await eventually(timeout: .seconds(60)) { await settled(views) }
        let link = await views.manager.link
        XCTAssertTrue(isSettled, "not settled: \(views.players.map { shownResolution($0) ?? "-" }), \(link.label), logs \(views.logs.map(\.values)); estimates \(views.estimates.text)",
                      file: file, line: line)
        guard isSettled else { return }
        // Then the estimate comes within 25 %: an event, not the figure at the instant the views settled. The
        // first confident figure rests on start-up (eight new connections in slow start, demuxer threads busy
        // building four pipelines): 5.1 Mbit/s seen on this link, lower on a loaded machine; from there the
        // published figure rises by at most 15 %/s (FESTIVE-style, SharedLinkEstimator), and the views can settle
        // while it rises (the CI failure: 3.4M at the settle instant). An estimator that never finds the link
        // still fails here, with its history.
        let converged = await eventually(timeout: .seconds(30)) {
            guard case .estimated(let bps) = await views.manager.link else { return false }
            return abs(Double(bps) - expected) <= 7e6 * 0.25
        }
        let after = await views.manager.link
        XCTAssertTrue(converged, "estimate \(after.label) \(what), not within 25 % of \(String(format: "%.1fM", expected / 1e6)) in 30 s; estimates \(views.estimates.text)",
                      file: file, line: line)
    }

    /// High view on 720p, the lows below it, the link estimated: true once all hold.
    private func settled(_ views: Views) async -> Bool {
        guard shownResolution(views.players[0]) == Self.top,
              (1...3).allSatisfy({ shownResolution(views.players[$0]).map { $0 != Self.top } ?? false }) else { return false }
        if case .estimated = await views.manager.link { return true }
        return false
    }

    func testHighViewReachesItsTopRungAndLowViewsDropFirstWhenTheLinkShrinks() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        // 7 Mbit/s, then 3.5 Mbit/s from the moment the views have settled and a low view has risen above the
        // bottom rung (a drop to see; the step is sent then, not timed); the clips served twice over (48 s).
        let server = try LinkServer(root: HLSFixture.root, rate: "7M@0,3.5M@600", repeatCount: 2)
        defer { server.stop() }
        let began = ContinuousClock.now
        let views = try await start { server.uri("angle\($0)/master.m3u8") }
        await assertSettles(views, estimate: 7e6, "on a 7 Mbit/s link")
        let lowRisen = await eventually(timeout: .seconds(20)) {
            (1...3).contains { shownResolution(views.players[$0]).map { $0 != Self.order[0] } ?? false }
        }
        XCTAssertTrue(lowRisen, "no low view rose above \(Self.order[0]) on 7 Mbit/s: logs \(views.logs.map(\.values))")
        // The shrink; then wait for the high view's drop (or 16 s).
        try server.startNextRateStep()
        let shrinkAt = ContinuousClock.now
        let lowsAtShrink = views.players.map { shownResolution($0) ?? "-" }
        _ = await eventually(timeout: .seconds(16)) {
            Self.firstDrop(views.logs[0], after: shrinkAt) != nil
        }
        let link2 = await views.manager.link
        let highDrop = Self.firstDrop(views.logs[0], after: shrinkAt)
        let lowDrops = (1...3).compactMap { Self.firstDrop(views.logs[$0], after: shrinkAt) }
        let message = "rungs at the shrink \(lowsAtShrink), \(link2.label), logs \(views.logs.map { $0.changes.map { "\($0.resolution)@\(Self.seconds($0.at - began))" } })"
        XCTAssertFalse(lowDrops.isEmpty, "no low view dropped after the shrink: \(message)")
        if let highDrop, let firstLow = lowDrops.min() {
            XCTAssertLessThan(firstLow, highDrop, "the high view dropped before any low one: \(message)")
        }
        if case .estimated(let bps) = link2 {
            XCTAssertLessThan(Double(bps), 3.5e6 * 1.3, "estimate after the shrink: \(message)")
        } else {
            XCTFail("no confident estimate after the shrink: \(message)")
        }
        for (n, counter) in views.counters.enumerated() {
            XCTAssertNil(counter.failure, "view \(n + 1) failed: \(String(describing: counter.failure))")
        }
        XCTAssertLessThanOrEqual(views.counters[0].stalls, 1, "the high view stalled \(views.counters[0].stalls) times: \(message)")
        print("estimated link, shrink 7 → 3.5 Mbit/s at \(Self.seconds(shrinkAt - began)) s: \(message)")
        await views.stop()
    }

    func testOnATcShapedLinkTheHighViewReachesItsTopRung() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let link = try NetworkNamespaceLink(rate: "7M")
        defer { link.close() }
        let server = try LinkServer(root: HLSFixture.root, link: link)
        defer { server.stop() }
        let views = try await start { server.uri("angle\($0)/master.m3u8") }
        // tbf counts IP packets; HTTP payload is ~95 % of that.
        await assertSettles(views, estimate: 6.7e6, "on a 7 Mbit/s tbf link")
        print("[tc link] estimates: \(views.estimates.text)")
        for (n, counter) in views.counters.enumerated() {
            XCTAssertNil(counter.failure, "view \(n + 1) failed: \(String(describing: counter.failure))")
        }
        await views.stop()
    }

    // MARK: Helpers

    /// The estimator's belief every 250 ms from the start (seconds: published/measured Mbit/s, confidence), for
    /// failure messages: a wrong figure at the end says nothing of how it came about.
    final class EstimateLog: Sendable {
        /// The lines so far; the Mutex owns them (written by the sampling task, read by the test).
        private final class Lines: Sendable {
            let value = Mutex<[String]>([])
            func append(_ line: String) { value.withLock { $0.append(line) } }
        }
        private let lines = Lines()
        private let task: Task<Void, Never>
        init(_ manager: PriorityManager) {
            let began = ContinuousClock.now
            let lines = self.lines
            task = Task {
                while !Task.isCancelled {
                    if let e = await manager.linkEstimate {
                        let line = String(format: "%.2fs %.2f/%.2fM c%.2f", EstimatedLinkTests.secondsValue(ContinuousClock.now - began),
                                          Double(e.bitsPerSecond) / 1e6, Double(e.measured) / 1e6, e.confidence)
                        lines.append(line)
                    }
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
        }
        deinit { task.cancel() }
        func stop() { task.cancel() }
        var text: String { lines.value.withLock { $0.joined(separator: ", ") } }
    }

    /// When the view first showed a lower rung than it had before, after `instant`.
    static func firstDrop(_ log: ResolutionLog, after instant: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let changes = log.changes
        for (i, change) in changes.enumerated() where i > 0 && change.at > instant {
            let before = order.firstIndex(of: changes[i - 1].resolution) ?? 0
            if (order.firstIndex(of: change.resolution) ?? 0) < before { return change.at }
        }
        return nil
    }

    static func seconds(_ d: Duration) -> String { String(format: "%.1f", secondsValue(d)) }
    static func secondsValue(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
}
