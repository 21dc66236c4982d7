import Coordination
import Foundation
import GStreamer
@testable import Multiview
import TestSupport
import XCTest

/// Issue 15's chase with real pipelines: a view catching up (a progressive mp4 from a paced local HTTP server,
/// whose preparation takes about a second) while another view seeks the group. The seek's barrier used to ask
/// the catching-up view to prepare too: its player ran that after the catch-up's own preparation (the whole group
/// waiting), the barrier started it on the new timeline, and the catch-up — seeing that the group had moved —
/// sought it away again and kept it "waiting for coordinated playback" for another aim (the soak's HLS views
/// 5–15 s late, a command every ~4 s). Now the command leaves it out and the catch-up joins the new timeline once.
final class CatchUpDuringCommandTests: XCTestCase {
    func testASeekWhileAViewCatchesUpLeavesItOutAndItJoinsTheNewTimelineOnce() async throws {
        let dir = try TemporaryDirectory()
        let server = try await PacedHTTPServer.start(serving: Media.angles[0], bytesPerSecond: 40_000, in: dir, for: self)
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[3], number: 1, item: "event")
        try await set.playAll()
        let playing = await set.waitRendering(since: 0, count: 10)
        check(playing, "\(await set.statuses())")

        let remote = try await set.add(server.url, number: 2, item: "event")
        let join = Task { try await remote.coordinator.join() }
        let preparing = await eventually(timeout: .seconds(10)) {
            await remote.coordinator.commandLog.contains { if case .buffer = $0.kind { true } else { false } }
        }
        check(preparing, "the joining view was never asked to prepare: \(await remote.coordinator.commandLog)")
        let seekNs = set.nowNs
        try await set.views[0].coordinator.coordinateSeek(to: .seconds(8))
        try await join.value
        let back = await eventually(timeout: .seconds(10)) { await set.allPlaying() }
        let aims = await set.medium.catchUpAims.map(\.description)
        check(back, "not every view playing 10 s after the seek: \(await set.statuses()); catch-up aims \(aims)")

        let commands = await remote.coordinator.commandLog.map(\.kind)
        XCTAssertFalse(commands.contains(.buffer(itemTime: .seconds(8), rate: 1)),
                       "the seek's barrier prepared the view that was catching up: \(commands)")
        let plays = commands.filter { if case .play = $0 { true } else { false } }
        XCTAssertEqual(plays.count, 1, "the view was started, then sought away again: \(commands); aims \(aims)")
        if case .buffer? = commands.last { XCTFail("the view was left prepared, not started: \(commands)") }
        let rendering = await set.waitRendering(since: seekNs, views: [2], count: 10)
        XCTAssertTrue(rendering, "the joined view renders nothing")
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after the join")
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: set.nowNs - 800_000_000, minFrames: 15, "after the join")
        await set.tearDown()
    }
}
