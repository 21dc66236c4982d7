import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Network buffering holds a playing view in PAUSED until its queue is full again. The resume must not depend on
/// the order in which the pause's state change and the 100 % message are read from the bus.
final class BufferingHoldTests: XCTestCase {
    /// A player on angle1, playing for 300 ms.
    private func playingPlayer() async throws -> Player {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        try await Task.sleep(for: .milliseconds(300))
        return player
    }

    /// A dip and its recovery posted back to back: the 100 % message is handled before the PAUSED state change
    /// the dip caused (under load this happened with real HLS queues, and the view stayed paused for good).
    func testABufferingDipThatEndsBeforeThePauseIsReadStillResumes() async throws {
        let player = try await playingPlayer()
        player.pipeline.postBufferingMessage(percent: 40)
        player.pipeline.postBufferingMessage(percent: 100)
        try await Task.sleep(for: .milliseconds(500))
        let before = await player.position?.seconds ?? 0
        let moved = await eventually(timeout: .seconds(5)) {
            let now = await player.position?.seconds ?? 0
            return now > before + 1.0
        }
        let status = await player.currentStatus
        XCTAssertTrue(moved, "the view did not play on after a buffering dip: \(status) at \(before) s")
        XCTAssertEqual(status.state, .playing)
        await player.stop()
    }

    /// The usual sequence still holds: below 100 % the view is buffering and does not advance, at 100 % it plays.
    func testAViewHeldForBufferingWaitsForOneHundredPercent() async throws {
        let player = try await playingPlayer()
        player.pipeline.postBufferingMessage(percent: 30)
        let buffering = await eventually(timeout: .seconds(3)) { await player.currentStatus.state == .buffering }
        let heldStatus = await player.currentStatus
        XCTAssertTrue(buffering, "not buffering at 30 %: \(heldStatus)")
        try await Task.sleep(for: .milliseconds(300))
        let held = await player.position?.seconds ?? 0
        try await Task.sleep(for: .milliseconds(700))
        let stillHeld = await player.position?.seconds ?? 0
        XCTAssertEqual(stillHeld, held, accuracy: 0.05, "the view advanced while held for buffering")
        player.pipeline.postBufferingMessage(percent: 100)
        let playing = await eventually(timeout: .seconds(3)) {
            let now = await player.position?.seconds ?? 0
            return now > held + 0.5
        }
        let resumed = await player.currentStatus
        XCTAssertTrue(playing, "not playing on at 100 %: \(resumed)")
        await player.stop()
    }
}
