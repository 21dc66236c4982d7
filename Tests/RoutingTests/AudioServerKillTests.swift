import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// The PulseAudio daemon killed under playing views (the soak's fault): every view keeps playing its video, says
/// its audio is lost, and stops when asked. Real pipelines, the test's own daemon (SIGKILL). The soak's player
/// once hung here (streaming threads blocked in PulseAudio's mainloop lock inside `AudioClockGuard.time`, 9 views
/// with HLS); this test has not reproduced that hang (it passed 2 of 2 on the unchanged guard), so it guards the
/// path, it does not prove a fix.
final class AudioServerKillTests: XCTestCase {
    func testViewsKeepPlayingAndStopWhenTheirPulseAudioDaemonIsKilled() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let daemon = fixture.daemon, log = fixture.audioEvents
            var players: [Player] = []
            for (number, file) in ["angle1-wide.mp4", "angle2-left.webm", "angle3-right.mkv"].enumerated() {
                let player = try await fixture.player(number: number + 1, file: file)
                try await player.load(MediaSource(RoutingMedia.path(file)))
                players.append(player)
            }
            for player in players { try await player.play() }
            let started = await eventually(timeout: .seconds(15)) {
                for p in players where (await p.position?.seconds ?? 0) < 1 { return false }
                return true
            }
            XCTAssertTrue(started, "the views did not play")

            var atKill: [Double] = []
            for p in players { atKill.append(await p.position?.seconds ?? 0) }
            let killedAt = ContinuousClock.now
            daemon.stop()   // SIGKILL
            let lost = await eventually(timeout: .seconds(10)) { await log.values.filter { $0 }.count >= players.count }
            let seen = await log.values
            XCTAssertTrue(lost, "every view says its audio output is lost: \(seen)")
            // Video plays on: each view's position moves a second past where it was at the kill (positions read
            // while a view swaps its sink are nil, never taken as 0).
            let moved = await eventually(timeout: .seconds(8)) {
                for (p, b) in zip(players, atKill) {
                    guard let now = await p.position?.seconds, now >= b + 1 else { return false }
                }
                return true
            }
            XCTAssertTrue(moved, "a view stood still after its PulseAudio daemon was killed (from \(atKill))")
            // At the pace of the clock (not raced through by a sink that stopped syncing).
            let wall = (ContinuousClock.now - killedAt) / .seconds(1)
            for (p, start) in zip(players, atKill) {
                let advanced = (await p.position?.seconds ?? start) - start
                print("\(p.view): \(advanced) s of media in \(wall) s after the kill")
                XCTAssertLessThan(advanced, wall + 0.5, "\(p.view) raced ahead of the clock")
            }
            // And each stops when asked, promptly (the hang: stop never returned).
            // Waited on with a deadline: a hung stop fails the test instead of hanging the suite.
            let stopped = StopFlag()
            let stopping = Task { for p in players { await p.stop() }; await stopped.set() }
            let ended = await eventually(timeout: .seconds(5)) { await stopped.value }
            XCTAssertTrue(ended, "the views did not stop within 5 s of being asked")
            if ended { await stopping.value }
        }
    }
}

private actor StopFlag {
    private(set) var value = false
    func set() { value = true }
}
