import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// Issue 15, the soak's PulseAudio kill: the HLS views FAILED with "seek to 0:01:07.033 at rate 1.0 refused". Losing
/// its stream, a view swaps in a fake sink and seeks back to where it was; it took that place from the last buffer
/// its sinks rendered, a timestamp, and an HLS stream's timestamps are offset from its position (1:07 for a view at
/// 7 s of 24 s media). The view plays on from where it was. Real pipeline, HLS over the test server, the test's own
/// PulseAudio daemon.
final class HLSAudioServerLossTests: XCTestCase {
    func testAnHLSViewPlaysOnFromWhereItWasWhenItsPulseAudioDaemonIsKilled() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        try await withPulseKillFixture { fixture in
            let player = try await fixture.player(number: 1, file: "angle1/master.m3u8")
            try await player.load(MediaSource(server.uri("angle1/master.m3u8")))
            try await player.playLocally()
            let played = await eventually(timeout: .seconds(20)) { (await player.position?.seconds ?? 0) > 2.0 }
            XCTAssertTrue(played, "the HLS view did not play")
            let before = await player.position?.seconds ?? 0

            fixture.daemon.stop()   // SIGKILL
            let lost = await eventually(timeout: .seconds(10)) { await player.audioOutputLost }
            XCTAssertTrue(lost, "the view never noticed that its daemon died")
            let failed = await eventually(timeout: .seconds(4)) { await player.failure != nil }
            let failure = await player.failure
            XCTAssertFalse(failed, "the view failed when its stream was lost: \(failure.map { "\($0)" } ?? "-")")
            let playing = await eventually(timeout: .seconds(10)) {
                let state = await player.currentStatus.state, at = await player.position?.seconds ?? 0
                return state == .playing && at > before
            }
            let status = await player.currentStatus, at = await player.position?.seconds ?? -1
            XCTAssertTrue(playing, "the view does not play on from \(before) s: \(status) at \(at) s")
            XCTAssertLessThan(at, before + 15, "the view jumped ahead instead of going on from \(before) s")
        }
    }
}
