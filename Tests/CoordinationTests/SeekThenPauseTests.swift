import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// Seek, play, pause, again and again, on four coordinated views with PulseAudio audio (the `play --coordinated`
/// setup): every pause completes on every view, at one position.
///
/// Before decodebin3's multiqueues were held at a 1 s minimum interleave (`MultiqueueFloor`), one view's
/// queues sometimes stopped after a seek (one full at a ~166 ms time limit, the other empty),
/// and the next pause timed out after 10 s: this test failed 2 runs of 2 that way, and `multiview play
/// --coordinated` hung on about one "seek, play, pause" in two or three.
final class SeekThenPauseTests: XCTestCase {
    func testEveryPauseAfterASeekCompletesOnEveryView() async throws {
        guard requirePulseAudio() else { return }
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        for (index, file) in Media.angles.enumerated() {
            try await set.add(file, number: index + 1, item: "event", audio: .pulse(device: "multiview_test"))
        }
        try await set.players[0].play()
        // The timing of the command-line reproduction: play a while, seek, play on for 2 s, pause.
        try await Task.sleep(for: .seconds(2))
        for (round, jump) in [10.0, -10, 10, -5].enumerated() {
            try await set.players[round % set.players.count].seek(by: jump)
            try await Task.sleep(for: .seconds(2))
            let began = ContinuousClock.now
            try await set.players[(round + 1) % set.players.count].pause()
            let took = ContinuousClock.now - began
            let paused = await eventually(timeout: .seconds(3)) { await set.allPaused() }
            let positions = await set.positions()
            XCTAssertTrue(paused, "round \(round + 1) (seek \(jump)): not every view paused: \(positions)")
            XCTAssertLessThan(took, .seconds(5), "round \(round + 1): the pause took \(took)")
            let seconds = positions.compactMap { $0?.seconds }
            XCTAssertEqual(seconds.count, set.players.count, "round \(round + 1): a view has no position")
            if let low = seconds.min(), let high = seconds.max() {
                XCTAssertLessThan(high - low, 0.1, "round \(round + 1): paused at \(seconds)")
            }
            try await set.players[round % set.players.count].play()
            try await Task.sleep(for: .seconds(1))
        }
        await set.tearDown()
    }
}
