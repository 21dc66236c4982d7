import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15 rows 1–2: whatever PulseAudio does to a view's stream, the view's video never stops. Every view runs
/// on the system clock with its audio following it (`Player.useSystemClock`); with pulsesink as the pipeline
/// clock (GStreamer's default) both tests below saw the video stop. Real pipelines, the test's PulseAudio daemon.
final class ClockModelTests: XCTestCase {
    /// Row 2: one uncoordinated local view into PulseAudio used to show ~1 s of "buffering 0%" near 1.9 s of media
    /// (pulsesink's clock stood still while PulseAudio settled the new stream).
    func testALocalViewIntoPulseAudioPlaysPastItsFirstSecondsWithoutStalling() async throws {
        try Services.requirePulseAudio()
        let player = try makePlayer(1, name: "clock-model-\(getpid())", audio: .pulse(device: nil))
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        let started = ContinuousClock.now
        let start = await player.queryPosition() ?? .zero
        // Past the 1.9 s mark with room to spare.
        let reached = await eventually(timeout: .seconds(15)) { (await player.queryPosition() ?? .zero) >= start + .seconds(4) }
        XCTAssertTrue(reached, "the view did not play 4 s of media")
        let wall = (ContinuousClock.now - started) / .seconds(1)
        XCTAssertLessThan(wall, 5.2, "4 s of media took \(wall) s of wall time: the view stalled on the way")
        let stalls = await log.statuses.filter { $0.state == .buffering }
        XCTAssertTrue(stalls.isEmpty, "a local file showed buffering: \(stalls)")
        await player.stop()
    }

    /// Row 1: moving a playing view's stream to another sink (what the routing arbiter's swap does) used to freeze
    /// its video 1–2 s and leave it behind for good.
    func testMovingAPlayingViewsStreamToAnotherSinkDoesNotStopItsVideo() async throws {
        try Services.requirePulseAudio()
        let name = "clock-move-\(getpid())-\(UInt16.random(in: 0...9999))"
        let load = try runTool("/usr/bin/pactl", ["load-module", "module-null-sink", "sink_name=\(name)"])
        XCTAssertEqual(load.status, 0, load.stderr)
        let module = load.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? runTool("/usr/bin/pactl", ["unload-module", module]) }

        let player = try makePlayer(1, name: name, audio: .pulse(device: nil))
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        let playedABit = await eventually(timeout: .seconds(10)) { (await player.queryPosition() ?? .zero) >= .seconds(2.5) }
        XCTAssertTrue(playedABit)
        let input = try XCTUnwrap(try sinkInput(named: name), "our stream is not on the server")
        let before = await player.queryPosition() ?? .zero
        let movedAt = ContinuousClock.now
        let move = try runTool("/usr/bin/pactl", ["move-sink-input", input, name])
        XCTAssertEqual(move.status, 0, move.stderr)
        try await Task.sleep(for: .seconds(3))
        let after = await player.queryPosition() ?? .zero
        let wall = (ContinuousClock.now - movedAt) / .seconds(1)
        let media = (after - before).seconds
        // Media time keeps pace with the wall clock across the move (a frozen view falls 1-2 s behind).
        XCTAssertGreaterThan(media, wall - 0.4, "after the move the view played \(media) s of media in \(wall) s")
        let stalls = await log.statuses.filter { $0.state == .buffering }
        XCTAssertTrue(stalls.isEmpty, "the move showed as buffering: \(stalls)")
        await player.stop()
    }

    /// The index of the sink input whose media name is `name` (pulsesink names the stream after the view).
    private func sinkInput(named name: String) throws -> String? {
        let listing = try runTool("/usr/bin/pactl", ["list", "sink-inputs"])
        var current: String?
        for line in listing.stdout.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("Sink Input #") { current = String(text.dropFirst("Sink Input #".count)) }
            if text == "media.name = \"\(name)\"", let current { return current }
        }
        return nil
    }
}
