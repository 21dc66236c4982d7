import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// Issue 15 row 3: two coordinated views, PulseAudio stopped and started again. The views play on silently while
/// it is gone and, once it answers again, get their streams back and keep playing together; they used to stay
/// PAUSED for good (a `p` resumed them 7 s further on). Real pipelines, a PulseAudio daemon of the test's own.
final class CoordinatedAudioServerLossTests: XCTestCase {
    func testCoordinatedViewsKeepPlayingTogetherWhenPulseAudioStopsAndReturns() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let daemon = fixture.daemon, log = fixture.audioEvents
            let views = try await fixture.coordinatedViews(["angle1-wide.mp4", "angle4-overhead.mp4"])
            let players = views.map(\.player)
            try await players[0].play()   // the group's play
            func allPlaying(past seconds: Double) async -> Bool {
                for p in players {
                    guard await p.currentStatus.state == .playing, (await p.position?.seconds ?? 0) > seconds else { return false }
                }
                return true
            }
            let started = await eventually(timeout: .seconds(15)) { await allPlaying(past: 1.5) }
            XCTAssertTrue(started, "the group did not start")

            let positionAtLoss = await players[0].position?.seconds ?? 0
            let lossAt = ContinuousClock.now
            daemon.stop()
            let lost = await eventually(timeout: .seconds(10)) { await log.values.filter { $0 }.count >= 2 }
            XCTAssertTrue(lost, "both views report the loss of their audio output")
            try await Task.sleep(for: .seconds(1))
            try await daemon.start()
            let back = await eventually(timeout: .seconds(15)) { await log.values.filter { !$0 }.count >= 2 }
            let seen = await log.values
            XCTAssertTrue(back, "both views report their audio output back: \(seen)")

            // Back: both views play on, together, without the group being told anything.
            let resumed = await eventually(timeout: .seconds(10)) { await allPlaying(past: 0) }
            var states: [PlayerStatus] = []
            for p in players { states.append(await p.currentStatus) }
            XCTAssertTrue(resumed, "the views did not play again after PulseAudio returned: \(states)")
            let before = await players[0].position?.seconds ?? 0
            try await Task.sleep(for: .seconds(1.5))
            let after = await players[0].position?.seconds ?? 0
            XCTAssertGreaterThan(after - before, 1.0, "the group does not advance after PulseAudio returned")
            let p0 = await players[0].position?.seconds ?? 0, p1 = await players[1].position?.seconds ?? 0
            XCTAssertLessThan(abs(p0 - p1), 0.2, "the views are apart after PulseAudio returned: \(p0) / \(p1)")
            // The group kept its time through the loss: media time moved on with the wall clock (give or take the
            // two sink swaps), it neither stood still nor jumped ahead.
            let wall = (ContinuousClock.now - lossAt) / .seconds(1)
            XCTAssertEqual(p0 - positionAtLoss, wall, accuracy: 1.5,
                           "from \(positionAtLoss) s the group is at \(p0) s after \(wall) s of wall time")
        }
    }
}
