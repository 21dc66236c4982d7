import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// PulseAudio stops under a playing view and comes back: the view keeps playing (silently), says so once, and
/// gets its stream back. Uses a daemon of its own (PULSE_SERVER pointed at it for the test's duration), so the
/// shared test daemon is never stopped.
final class AudioServerLossTests: XCTestCase {
    func testAViewPlaysOnWhenPulseAudioStopsAndGetsItsStreamBackWhenItReturns() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let daemon = try PrivatePulseDaemon()
        try await daemon.start()
        let previous = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", daemon.server, 1)
        defer {
            if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") }
            daemon.stop()
        }
        let client = try await PulseAudioClient.connect(server: daemon.server)
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: "angle1-wide.mp4"),
                                                                   video: .fakeSink, audio: .pulse(device: nil)))
        let log = AudioEvents()
        let events = await player.events()
        let reader = Task { for await e in events { if case .audioOutput(let lost, _) = e { await log.add(lost) } } }
        defer { reader.cancel() }
        try await player.load(MediaSource(RoutingMedia.path("angle1-wide.mp4")))
        try await player.play()
        defer { Task { await player.stop() } }
        let streaming = await eventually { ((try? await client.sinkInputs().count) ?? 0) == 1 }
        XCTAssertTrue(streaming, "the view's stream plays on the private daemon")

        daemon.stop()
        let lost = await eventually { await log.values.first == true }
        XCTAssertTrue(lost, "the view reports the loss of its audio output")
        try await Task.sleep(for: .milliseconds(800))
        let p1 = await player.position
        try await Task.sleep(for: .milliseconds(1000))
        let p2 = await player.position
        let failure = await player.failure
        XCTAssertNil(failure, "losing PulseAudio does not fail the view")
        let state = await player.currentStatus.state
        XCTAssertEqual(state, .playing, "video keeps playing")
        if let p1, let p2 { XCTAssertGreaterThan(p2.seconds - p1.seconds, 0.5, "position advances") } else { XCTFail("no position") }

        try await daemon.start()
        let client2 = try await PulseAudioClient.connect(server: daemon.server)
        let back = await eventually(timeout: .seconds(10)) { await log.values.last == false }
        let seen = await log.values
        XCTAssertTrue(back, "the view reports its audio output back: \(seen)")
        let streamingAgain = await eventually { ((try? await client2.sinkInputs().count) ?? 0) == 1 }
        XCTAssertTrue(streamingAgain, "the view's stream is on the restarted daemon")
        let stateAfter = await player.currentStatus.state
        XCTAssertEqual(stateAfter, .playing)
    }
}

actor AudioEvents {
    private(set) var values: [Bool] = []
    func add(_ v: Bool) { values.append(v) }
}
