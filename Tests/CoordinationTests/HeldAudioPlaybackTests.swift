import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// A coordinated view's sound is not heard until its audio clock follower has placed it on the group's clock
/// (`AudioPlacementHold`), and is heard from then on; a view playing alone is heard from its first sample.
/// Recorded from the test sink's monitor (a real pulsesink on a null sink): every media file starts with a click at
/// 0 s and has one on every whole second, under a steady tone.
final class HeldAudioPlaybackTests: XCTestCase {
    func testACoordinatedViewIsHeardOnlyOncePlacedAndAViewAloneFromItsFirstSample() async throws {
        guard requirePulseAudio() else { return }
        let dir = try TemporaryDirectory()

        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        let coordinated = try await set.add(Media.angles[0], number: 1, item: "event", audio: .pulse(device: "multiview_test"))
        let heldStart = try await Self.recordStart(to: dir.path("coordinated.raw")) { try await set.playAll() }
        let statistics = await coordinated.player.audioPlacementHoldStatistics
        let follower = await coordinated.player.audioClockStatistics
        let timing = await coordinated.player.audioTimingTapStatistics
        await set.tearDown()

        let alone = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 2, name: "alone"),
                                                                  video: .fakeSink, audio: .pulse(device: "multiview_test")))
        try await alone.load(MediaSource(Media.angles[0]))
        let aloneStart = try await Self.recordStart(to: dir.path("alone.raw")) { try await alone.play() }
        let aloneStatistics = await alone.audioPlacementHoldStatistics
        await alone.stop()

        print("[held] coordinated: \(heldStart); hold \(statistics.map { "\($0)" } ?? "none"); follower \(follower.map { "\($0)" } ?? "none")")
        print("[held] alone: \(aloneStart); hold \(aloneStatistics.map { "\($0)" } ?? "none")")
        // Both start at 0 s, where the media has a click; a start clips PulseAudio's first few ms (the alone view's
        // 0 s click was never heard), so what tells is the time from the first sound to the 1 s click.
        // The control: played alone, the view is heard from (within 100 ms of) its start.
        let aloneGap = try unwrap(aloneStart.firstClickAfterSound, "alone: no click heard after its sound began")
        XCTAssertGreaterThan(aloneGap, 0.9, "alone: the view's first 100 ms or more were not heard")
        XCTAssertEqual(aloneStatistics?.holds, 0, "a view playing alone was held")
        // Coordinated: silent until placed (the follower's warm-up and start window: about 0.4 s of audio, 0.6 s
        // without the server's timing), heard before its 1 s click (the hold ended).
        let gap = try unwrap(heldStart.firstClickAfterSound, "coordinated: no click heard after its sound began")
        XCTAssertLessThan(gap, 0.8, "coordinated: heard within 200 ms of its start: the audio was not held")
        XCTAssertGreaterThan(gap, 0.1, "coordinated: a click within 100 ms of the first sound: the 0 s click was not held")
        let hold = try unwrap(statistics, "a coordinated view with PulseAudio output has no placement hold")
        XCTAssertGreaterThanOrEqual(hold.holds, 1)
        XCTAssertFalse(hold.held, "still held after 2 s of play")
        XCTAssertEqual(hold.givenUp, 0, "the follower never placed the stream; the hold gave up")
        // Its follower was placed by the server's playout (PulseTimingTap), not libpulse's smoothed time.
        let tap = try unwrap(timing, "a coordinated view's PulseAudio sink has no timing tap")
        XCTAssertGreaterThan(tap.corrected, 50, "the follower's reports were not measured against the server's playout")
    }

    /// What one recording of a view's start heard (left channel).
    struct StartHeard: CustomStringConvertible {
        /// When the view's sound began (s into the recording), nil when it never did.
        var sound: Double?
        /// The first click at or after the sound began, s after it.
        var firstClickAfterSound: Double?
        var description: String {
            "sound from \(sound.map { String(format: "%.3f s", $0) } ?? "never"), first click "
                + (firstClickAfterSound.map { String(format: "%.3f s after it", $0) } ?? "none")
        }
    }

    /// Records the test sink's monitor from before `start` until 2.5 s after it.
    static func recordStart(to path: String, _ start: () async throws -> Void) async throws -> StartHeard {
        let recorder = try PulseAudioCoordinationTests.monitorRecorder(to: path)
        defer { recorder.stop() }
        // The null sink's monitor delivers silence while idle: data in the file means the recording runs.
        let recording = await eventually(timeout: .seconds(10)) { fileSize(path) > 48000 || !recorder.isRunning }
        XCTAssertTrue(recording && recorder.isRunning, "parecord did not start (\(recorder.exitDescription)): \(recorder.output())")
        try await start()
        try await Task.sleep(for: .milliseconds(2500))
        recorder.stop()
        let left = try PulseAudioCoordinationTests.monitorSamples(at: path).left
        // The sound begins at the first 5 ms block whose RMS is a quarter of the tone's (0.3 peak: RMS 0.21).
        let block = 240
        var sound: Int?
        for start in stride(from: 0, to: left.count - block, by: block) {
            let power = left[start..<(start + block)].reduce(Float(0)) { $0 + $1 * $1 } / Float(block)
            if power.squareRoot() > 0.05 { sound = start; break }
        }
        guard let sound else { return StartHeard() }
        let soundTime = Double(sound) / 48000
        // The click's burst may begin inside the block where the sound begins: look from one block earlier.
        let click = ClickDetector.clicks(in: left, sampleRate: 48000).first { $0.time >= soundTime - 0.006 }
        return StartHeard(sound: soundTime, firstClickAfterSound: click.map { max(0, $0.time - soundTime) })
    }
}
