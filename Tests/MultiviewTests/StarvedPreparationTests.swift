import Foundation
import GStreamer
import TestSupport
import XCTest
// Reaches the player's pipeline itself (its audio sink), an internal of Multiview.
@testable import Multiview

/// The soak's frozen view (issue 15): an added view's PulseAudio stream stopped consuming for seconds while it
/// played; its audio queues filled, the demuxer blocked on them, its video ran dry (BUFFERING 0%), and every
/// coordinated preparation after that (a rejoin, each group command) waited for a PAUSED that could only come
/// with a video frame — the view said "waiting for coordinated playback" for the rest of the run. Here the audio
/// output stops consuming the same way (a sink that waits on the clock for an hour before its next buffer, yet
/// prerolls at once when paused, as pulsesink does), and the preparation must preroll the view where it is asked.
final class StarvedPreparationTests: XCTestCase {
    func testACoordinatedPreparationOfAViewStarvedBehindItsAudioOutputPrerollsThere() async throws {
        let player = try makePlayer(1, name: "starved")
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.playLocally()
        let playing = await eventually(timeout: .seconds(10)) { (await player.position ?? .zero) > .milliseconds(500) }
        let early = await log.statuses
        XCTAssertTrue(playing, "never played: \(early)")

        // The audio output stops consuming while playing; the view's video starves behind it.
        let audioSink = try player.pipeline.get("audio-sink", as: Element.self)
        try audioSink.set("ts-offset", fromString: "3600000000000")
        let starved = await eventually(timeout: .seconds(20)) { await player.currentStatus.state == .buffering }
        let stalledAt = await player.position
        let seen = await log.statuses
        XCTAssertTrue(starved, "the video never starved behind the blocked audio output: \(seen)")

        // What a rejoin or a group command asks of it: prepare (PAUSED, seek, preroll) at 3 s.
        let began = ContinuousClock.now
        do {
            try await player.prepareCoordinated(at: .seconds(3), rate: 1, timeout: .seconds(10))
        } catch {
            let statuses = await log.statuses
            XCTFail("the preparation failed after \(ContinuousClock.now - began) (stalled at \(String(describing: stalledAt))): " +
                    "\(error); statuses \(statuses)")
            await player.stop()
            return
        }
        let status = await player.currentStatus
        let statuses = await log.statuses
        XCTAssertEqual(status.state, .paused, "\(statuses)")
        XCTAssertEqual(status.waitingToPlay, .waitingForCoordinatedPlayback)
        let position = await player.position
        XCTAssertEqual(try XCTUnwrap(position).seconds, 3, accuracy: 0.1, "prerolled somewhere else")
        await player.stop()
    }
}
