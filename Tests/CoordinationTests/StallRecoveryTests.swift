import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import SyncAnalysis
import TestSupport
import XCTest

/// A real network stall: one view plays a bundled file from a local HTTP server that sends at a little more than
/// the media's bitrate (`PacedHTTPServer`); the server is frozen (SIGSTOP) so the view runs dry, then thawed
/// (SIGCONT). The view must suspend itself (`stallRecovery`) without holding up the others, and rejoin the group's
/// time when its buffer is full again.
final class StallRecoveryTests: XCTestCase {
    func testAStalledViewSuspendsItselfAndRejoinsAlignedWhenItsBufferRefills() async throws {
        try await stallAndRejoin(startingAt: 40_000)
    }

    /// The same stall after a start whose preparation was slow: the server sent at 33 KB/s until the group
    /// played, so the view's buffer took ~2.4 s to fill and its start preparation ~2.9 s. A catch-up aims from the
    /// last measured preparation: the old lead, twice it plus 80 ms (~5.9 s), kept the view waiting past the 5 s
    /// the test allows, as load did to the flaky run of the test above (issue 13: at 40 KB/s it started 4.87 s
    /// after the suspension ended, on a quiet machine).
    func testAStalledViewWhoseStartWasSlowRejoinsWithoutWaitingTwiceThatLong() async throws {
        try await stallAndRejoin(startingAt: 33_000)
    }

    /// Plays a local view and a view from a `PacedHTTPServer` sending at `startRate` until the group plays, then
    /// at 40 KB/s; stalls the server, thaws it, and checks the stalled view's suspension, rejoin and alignment.
    private func stallAndRejoin(startingAt startRate: Int) async throws {
        let dir = try TemporaryDirectory()
        // angle1-wide.mp4 is 441760 bytes for 24 s (18.4 KB/s): 40 KB/s keeps a few seconds ahead, not the file.
        let server = try await PacedHTTPServer.start(serving: Media.angles[0], bytesPerSecond: startRate, in: dir, for: self)
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[3], number: 1, item: "event")
        let remote = try await set.add(server.url, number: 2, item: "event")
        let events = await remote.coordinator.eventLog(clock: set.clock)
        let remoteLog = await remote.player.eventLog(clock: set.clock)
        let localLog = await set.players[0].eventLog(clock: set.clock)
        try await set.playAll()
        try server.setRate(40_000)
        let rendering = await set.waitRendering(since: 0, count: 10)
        check(rendering, "\(await set.statuses())")

        // Before the stall: the remote view plays steadily with the group (no suspension for a second).
        let steady = await eventually(timeout: .seconds(6)) {
            let reasons = await remote.coordinator.suspensionReasons
            guard reasons.isEmpty, await set.allPlaying() else { return false }
            let since = set.nowNs - 1_000_000_000
            return set.frames(since: since, views: [2]).count >= 25
                && !events.since(since).contains { $0.value == .suspensionBegan(.stallRecovery) }
        }
        check(steady, "the remote view never played steadily before the stall: \(events.values.filter { if case .participantsChanged = $0 { false } else { true } })")

        // The network stops.
        let stallNs = set.nowNs
        kill(server.processIdentifier, SIGSTOP)
        let began = await eventually(timeout: .seconds(6)) {
            events.since(stallNs).contains { $0.value == .suspensionBegan(.stallRecovery) }
        }
        let remoteStatuses = remoteLog.statuses(since: stallNs)
        check(began, "no stallRecovery suspension after the server stopped; remote statuses \(remoteStatuses), " +
              "positions \(await set.settledPositions())")
        if began {
            let buffering = remoteStatuses.contains { $0.state == .buffering }
            XCTAssertTrue(buffering, "the stalled view never said BUFFERING: \(remoteStatuses)")
            // The others keep playing while it is stalled.
            try await Task.sleep(for: .milliseconds(500))
            let localPlaying = await set.allPlaying([0])
            XCTAssertTrue(localPlaying)
        }

        // The network comes back; the view refills, ends its suspension and jumps to the group's time.
        let resumeNs = set.nowNs
        kill(server.processIdentifier, SIGCONT)
        if began {
            let ended = await eventually(timeout: .seconds(8)) {
                events.since(resumeNs).contains { $0.value == .suspensionEnded(.stallRecovery) }
            }
            XCTAssertTrue(ended, "the stallRecovery suspension did not end: \(events.values)")
        }
        let endedNs = set.nowNs
        let back = await eventually(timeout: .seconds(5)) { await set.allPlaying() }
        let aims = await set.medium.catchUpAims.map(\.description)
        let preparations = await remote.player.coordinatedPreparations.map(\.description)
        print("catch-up after the stall (suspension ended at clock \(ClockTime(nanoseconds: endedNs))):\n  " +
              aims.joined(separator: "\n  ") + "\nthe remote view's preparations:\n  " + preparations.joined(separator: "\n  "))
        check(back, "not every view playing 5 s after the suspension ended: \(await set.statuses()); catch-up aims " +
              "(it ended at clock \(ClockTime(nanoseconds: endedNs))): \(aims); preparations \(preparations)")
        let renderingAgain = await set.waitRendering(since: endedNs, views: [2], count: 10)
        XCTAssertTrue(renderingAgain, "the remote view renders nothing after the stall")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after the stall")
        try await Task.sleep(for: .seconds(1.2))
        let reasons = await remote.coordinator.suspensionReasons
        XCTAssertEqual(reasons, [], "still (or again) suspended after the stall: \(events.since(endedNs).map(\.value))")
        assertAligned(set, since: endedNs + 300_000_000, minFrames: 20, "after the stall")

        // The local view never paused, waited or jumped.
        let localStatuses = localLog.statuses(since: stallNs)
        XCTAssertFalse(localStatuses.contains { $0.state != .playing || $0.waitingToPlay != nil }, "local view: \(localStatuses)")
        let renders = set.frames(since: stallNs, views: [1]).sorted { $0.renderClockNs < $1.renderClockNs }
        for (a, b) in zip(renders, renders.dropFirst()) where b.mediaTimeNs <= a.mediaTimeNs || b.mediaTimeNs - a.mediaTimeNs > 70_000_000 {
            XCTFail("the local view jumped from \(a.mediaTimeNs) to \(b.mediaTimeNs)")
        }
        await set.tearDown()
    }

    /// A stall without any buffering message: a local file whose source stops delivering (held at its source
    /// element's output, as a hung disk or pipe would). The player sees its video stop while playing, reports
    /// buffering, the coordinator suspends it (`stallRecovery`), and it rejoins aligned when data flows again.
    func testAViewWhoseLocalSourceStopsDeliveringSuspendsItselfAndRejoinsAligned() async throws {
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[0], number: 1, item: "event")
        let starved = try await set.add(Media.angles[3], number: 2, item: "event")
        let source = HeldSource()
        let setup = try starved.player.pipeline.connect("source-setup") { args in source.set(args.element(at: 1)) }
        // The source is made at load; reload so the handler sees it.
        try await starved.player.load(MediaSource(Media.angles[3]))
        let events = await starved.coordinator.eventLog(clock: set.clock)
        let othersLog = await set.players[0].eventLog(clock: set.clock)
        try await set.playAll()
        let rendering = await set.waitRendering(since: 0, count: 10)
        check(rendering, "\(await set.statuses())")
        try await Task.sleep(for: .milliseconds(500))

        let pad = try XCTUnwrap(source.element, "no source element was set up").staticPad("src")
        let holdNs = set.nowNs
        var hold: PadProbe? = pad.addProbe([.buffer, .blocking]) { _ in .ok }
        let began = await eventually(timeout: .seconds(4)) { events.values.contains(.suspensionBegan(.stallRecovery)) }
        XCTAssertTrue(began, "no automatic stallRecovery suspension: \(events.values)")
        let statusWhileStarved = await starved.player.currentStatus
        XCTAssertEqual(statusWhileStarved.state, .buffering)
        let othersPlaying = await set.allPlaying([0])
        XCTAssertTrue(othersPlaying, "the other view stopped with it")
        try await Task.sleep(for: .milliseconds(500))

        hold = nil
        withExtendedLifetime(hold) {}
        let releasedNs = set.nowNs
        let ended = await eventually(timeout: .seconds(10)) { events.values.contains(.suspensionEnded(.stallRecovery)) }
        XCTAssertTrue(ended, "the suspension did not end when data flowed again: \(events.values)")
        let back = await eventually { await set.allPlaying() }
        check(back, "\(await set.statuses())")
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: set.nowNs - 800_000_000, minFrames: 15, "after the starved view rejoined")
        // The other view never paused or waited.
        let statuses = othersLog.statuses(since: holdNs)
        XCTAssertFalse(statuses.contains { $0.state != .playing || $0.waitingToPlay != nil }, "view 1: \(statuses)")
        XCTAssertGreaterThan(set.frames(since: holdNs, views: [1], until: releasedNs).count, 30, "view 1 kept rendering")
        withExtendedLifetime(setup) {}
        await set.tearDown()
    }
}
