import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest
@testable import Multiview

/// The starvation watch: a view whose video stops reaching its sink while playing reports buffering (what a
/// coordinator turns into a `stallRecovery` suspension) and plays again when frames come back; nothing else does.
final class VideoStarvationTests: XCTestCase {
    func testAViewWhoseSourceStopsDeliveringShowsBufferingThenPlaysAgain() async throws {
        let player = try makePlayer()
        let source = Holder()
        let setup = try player.pipeline.connect("source-setup") { args in source.set(args.element(at: 1)) }
        // Every status the view goes through, for the failure message: a PLAYING that comes again after the hold
        // rearms the watch, and a view that gets no frame after a rearm is never judged starved.
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        try await Task.sleep(for: .milliseconds(800))
        let pad = try XCTUnwrap(source.element, "no source element was set up").staticPad("src")
        var hold: PadProbe? = pad.addProbe([.buffer, .blocking]) { _ in .ok }
        let heldAt = ContinuousClock.now
        // The view first plays out what its queues hold (decodebin3's multiqueue keeps at least 1 s, see
        // MultiqueueFloor; seen 2.5 s to more than 5 s under load), then the 500 ms watch fires.
        let buffering = await eventually(timeout: .seconds(12)) { await player.currentStatus.state == .buffering }
        print("[starvation] buffering reported \(ContinuousClock.now - heldAt) after the source was held")
        let held = await player.currentStatus
        let statuses = await log.statuses
        XCTAssertTrue(buffering, "still \(held) with its source held; statuses: \(statuses)")
        XCTAssertEqual(held.waitingToPlay, .buffering(percent: 0))
        hold = nil
        withExtendedLifetime(hold) {}
        let playing = await eventually(timeout: .seconds(5)) { await player.currentStatus.state == .playing }
        let after = await player.currentStatus
        XCTAssertTrue(playing, "not playing again once data flows: \(after)")
        withExtendedLifetime(setup) {}
        await player.stop()
    }

    func testAudioOnlyMediaAndAPauseAreNotStarvation() async throws {
        // No video at all: nothing ever reaches the video sink, and that is not a stall.
        let audioOnly = try makePlayer()
        let audioLog = await EventLog(audioOnly)
        try await audioOnly.load(MediaSource(TestMedia.path("announcer.ogg")))
        try await audioOnly.play()
        try await Task.sleep(for: .milliseconds(1500))
        let audioStatuses = await audioLog.statuses
        XCTAssertFalse(audioStatuses.contains { $0.state == .buffering }, "audio-only media shown as buffering: \(audioStatuses)")
        await audioOnly.stop()

        // A long pause, then play: the frames before the pause do not count.
        let video = try makePlayer()
        try await video.load(MediaSource(TestMedia.angle1))
        try await video.play()
        try await Task.sleep(for: .milliseconds(400))
        try await video.pause()
        try await Task.sleep(for: .milliseconds(1200))
        let videoLog = await EventLog(video)
        try await video.play()
        try await Task.sleep(for: .milliseconds(1000))
        let videoStatuses = await videoLog.statuses
        XCTAssertFalse(videoStatuses.contains { $0.state == .buffering }, "resuming after a pause shown as buffering: \(videoStatuses)")
        await video.stop()
    }
}

/// The element playbin3 hands to "source-setup" (on a streaming thread).
private final class Holder: Sendable {
    private let state = Mutex<Element?>(nil)
    func set(_ element: Element?) { state.withLock { $0 = element } }
    var element: Element? { state.withLock { $0 } }
}
