import Foundation
import GStreamer
import Multiview
import Priority
import TestSupport
import XCTest

/// One high and three low views of the HLS set over one shaped link (Scripts/lib/hls-server.py pacing all its
/// responses through a shared 9 Mbit/s bucket): four top rungs would need ~22 Mbit/s. The high view settles on
/// its top rung while the lows stay lower; swapping priorities swaps the rungs; nobody stalls for long.
final class ShapedLinkTests: XCTestCase {
    static let link = 9_000_000

    func testHighViewGetsTopRungAndSwappingPrioritiesSwapsRungs() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root, rate: String(Self.link))
        defer { server.stop() }
        let manager = PriorityManager(budget: Self.link)
        let priorities: [NetworkResourcePriority] = [.high, .low, .low, .low]
        var built: [Player] = [], counters: [StallCounter] = [], logs: [ResolutionLog] = []
        for n in 1...4 {
            let player = try makePlayer(n, name: "angle\(n)")
            let source = MediaSource(server.uri("angle\(n)/master.m3u8"))
            await manager.attach(player, source: source, priority: priorities[n - 1])
            counters.append(await StallCounter(player))
            logs.append(ResolutionLog(player))
            try await player.load(source)
            built.append(player)
        }
        let players = built
        let reports = await manager.reports()
        XCTAssertEqual(reports.map(\.rungCount), [4, 4, 4, 4], "the manager did not read every master playlist")
        let allocation = await manager.lastAllocation
        XCTAssertEqual(allocation?.views[1]?.rungIndex, 3, "\(String(describing: allocation))")
        XCTAssertLessThanOrEqual(allocation?.total ?? .max, Self.link)
        await withTaskGroup(of: Void.self) { group in
            for player in players { group.addTask { try? await player.play(timeout: .seconds(40)) } }
        }

        let top = "1920x1080"
        let settled = await eventually(timeout: .seconds(14)) {
            shownResolution(players[0]) == top && (1...3).allSatisfy { shownResolution(players[$0]).map { $0 != top } ?? false }
        }
        XCTAssertTrue(settled, "after settling: \(players.map { shownResolution($0) ?? "-" }), logs \(logs.map(\.values))")
        // The manager's report (tile tag, status line) follows within its polling interval.
        let labelled = await eventually(timeout: .seconds(3)) {
            await manager.report(forView: 1)?.label.hasPrefix("high 1920x1080") == true
        }
        let label = await manager.report(forView: 1)?.label
        XCTAssertTrue(labelled, "label \(label ?? "nil")")
        let settledAt = ContinuousClock.now

        // Swap: view 1 low, view 2 high.
        await manager.setPriority(.low, forView: 1)
        await manager.setPriority(.high, forView: 2)
        let swapped = await eventually(timeout: .seconds(14)) {
            shownResolution(players[1]) == top && shownResolution(players[0]).map { $0 != top } ?? false
        }
        print("shaped link: swapped after \(ContinuousClock.now - settledAt): \(logs.map(\.values))")
        XCTAssertTrue(swapped, "after the swap: \(players.map { shownResolution($0) ?? "-" }), logs \(logs.map(\.values))")

        for (n, counter) in counters.enumerated() {
            XCTAssertNil(counter.failure, "view \(n + 1) failed: \(String(describing: counter.failure))")
            XCTAssertLessThanOrEqual(counter.stalls, 2, "view \(n + 1) stalled \(counter.stalls) times")
        }
        for p in players { await p.stop() }
    }
}

/// Without `--bandwidth` the manager's budget is what the demuxers measure (`current-bandwidth`).
final class MeasuredBandwidthTests: XCTestCase {
    func testWithoutABudgetTheAllocationFollowsTheMeasuredBandwidth() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root, rate: "6M")
        defer { server.stop() }
        let manager = PriorityManager(budget: nil)
        let player = try makePlayer(1, name: "angle1")
        let source = MediaSource(server.uri("angle1/master.m3u8"))
        await manager.attach(player, source: source, priority: .high)
        // Before anything was measured: no budget, the top rung is allowed.
        let initial = await manager.lastAllocation
        XCTAssertNil(initial?.budget)
        XCTAssertEqual(initial?.views[1]?.rungIndex, 3)
        try await player.load(source)
        try await player.play(timeout: .seconds(40))
        let measured = await eventually(timeout: .seconds(15)) {
            guard let report = await manager.report(forView: 1), report.measuredBandwidth > 0 else { return false }
            return await manager.lastAllocation?.budget != nil
        }
        let report = await manager.report(forView: 1)
        let allocation = await manager.lastAllocation
        await player.stop()
        XCTAssertTrue(measured, "no measured budget: \(String(describing: report)), \(String(describing: allocation))")
        // The budget is 90 % of what was measured over the 6 Mbit/s link: not more than the link (+20 % for
        // measurement noise), and well above nothing.
        print("measured: \(report?.measuredBandwidth ?? 0) bit/s, budget \(allocation?.budget ?? 0)")
        if let budget = allocation?.budget {
            XCTAssertLessThanOrEqual(budget, 7_200_000)
            XCTAssertGreaterThan(budget, 1_000_000)
        }
    }
}
