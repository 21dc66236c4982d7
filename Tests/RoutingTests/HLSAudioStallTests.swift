import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// Issue 15, the soak's frozen HLS views ("BUFFERING 0%" for 3-23 s, two frames into a segment right after a seek):
/// PulseAudio took no samples from the view's stream for seconds, pulsesink blocked, the audio queues behind it
/// filled, and adaptivedemux2's output loop, which pushes audio and video from one thread, blocked on its audio pad
/// while the video queue ran dry. Here the test's own PulseAudio daemon is stopped (SIGSTOP: it answers nothing, as
/// the stalled stream did) while an HLS view plays; the picture must go on. Real pipeline, HLS from the test server.
final class HLSAudioStallTests: XCTestCase {
    /// How long PulseAudio takes no samples: longer than every audio queue in front of the sink (~1-1.5 s).
    static let stall: Duration = .seconds(6)

    func testAnHLSViewsPictureGoesOnWhilePulseAudioTakesNoSamples() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        try await withPulseKillFixture { fixture in
            let player = try await fixture.player(number: 1, file: "angle1/master.m3u8")
            let statuses = StatusLog(), events = await player.events()
            let reader = Task { for await event in events { if case .status(let s) = event { await statuses.add("\(s)") } } }
            defer { reader.cancel() }
            try await player.load(MediaSource(server.uri("angle1/master.m3u8")))
            try await player.playLocally()
            let played = await eventually(timeout: .seconds(20)) { (await player.position?.seconds ?? 0) > 2.0 }
            let early = await statuses.values
            XCTAssertTrue(played, "the HLS view did not play: \(early)")
            guard played, let pid = fixture.daemon.pid else { return XCTFail("no daemon to stop") }

            let before = await player.position?.seconds ?? 0
            let stoppedAt = ContinuousClock.now
            XCTAssertEqual(kill(pid, SIGSTOP), 0, "SIGSTOP to the PulseAudio daemon")
            var farthest = before, sawBuffering = false
            while ContinuousClock.now - stoppedAt < Self.stall {
                try await Task.sleep(for: .milliseconds(200))
                farthest = max(farthest, await player.position?.seconds ?? 0)
                if await player.currentStatus.state == .buffering { sawBuffering = true }
            }
            let status = await player.currentStatus
            XCTAssertEqual(kill(pid, SIGCONT), 0, "SIGCONT to the PulseAudio daemon")
            let log = await statuses.values.suffix(6)
            // Playing on the clock, the picture advances about as far as the stall lasted; stuck behind the audio
            // it stops ~1 s in (what the queues held).
            XCTAssertGreaterThan(farthest - before, Self.stall.inSeconds - 1.5,
                                 "the picture stood still while PulseAudio took no samples: from \(before) s to \(farthest) s in \(Self.stall); \(status); \(log)")
            XCTAssertFalse(sawBuffering, "the view showed BUFFERING while its HLS server served fine: \(log)")
            let goesOn = await eventually(timeout: .seconds(10)) { (await player.position?.seconds ?? 0) > farthest + 1 }
            let after = await player.currentStatus
            XCTAssertTrue(goesOn, "the view did not play on after PulseAudio came back: \(after)")
        }
    }
}
