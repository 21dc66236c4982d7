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
        try await withPulseKillFixture { fixture in
            let daemon = fixture.daemon, log = fixture.audioEvents
            let client = try await PulseAudioClient.connect(server: daemon.server)
            let player = try await fixture.player(number: 1, file: "angle1-wide.mp4")
            try await player.load(MediaSource(RoutingMedia.path("angle1-wide.mp4")))
            try await player.play()
            let streaming = await eventually { ((try? await client.sinkInputs().count) ?? 0) == 1 }
            XCTAssertTrue(streaming, "the view's stream plays on the private daemon")
            // The kill lands on a view that plays, not on one still starting: a stream appears at preroll, and a
            // daemon killed before the sink's first buffer in PLAYING hits GStreamer 1.22's pulsesink deadlock
            // (see `PulseServerInstance`), which hung this test once in ~25 runs (session 21).
            let played = await eventually(timeout: .seconds(15)) { await allPlaying([player], past: 0.5) }
            XCTAssertTrue(played, "the view did not play")

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
}

/// The libpulse client and the arbiter when the server dies under them (a private daemon, no players).
final class PulseAudioServerLossTests: XCTestCase {
    func testARequestInFlightWhenTheServerDiesEndsWithDisconnectedAndSubscribersHearIt() async throws {
        let daemon = try PrivatePulseDaemon()
        try await daemon.start()
        defer { daemon.stop() }
        let client = try await PulseAudioClient.connect(server: daemon.server)
        let events = client.events()
        let heard = Task { for await event in events where event == .disconnected { return true }; return false }
        daemon.freeze()
        // The request goes out to a daemon that does not answer; its caller is suspended, no thread waits.
        let outcome = Outcome()
        Task {
            do throws(PulseAudioError) { _ = try await client.sinks(); await outcome.set(nil) } catch { await outcome.set(error) }
        }
        try await Task.sleep(for: .milliseconds(200))
        daemon.stop()
        let ended = await eventually(timeout: .seconds(5)) { await outcome.done }
        XCTAssertTrue(ended, "the suspended request ends when the connection dies (never hangs)")
        let error = await outcome.error
        XCTAssertEqual(error, .disconnected, "libpulse cancels the operation; the caller resumes with a typed error")
        let disconnected = await heard.value
        XCTAssertTrue(disconnected, "subscribers hear the connection go")
        XCTAssertFalse(client.isConnected)
        do {
            try await client.setMute(sinkInput: 1, true)
            XCTFail("a request after the loss succeeded")
        } catch {
            XCTAssertEqual(error, .disconnected)
        }
    }

    func testTheArbiterReportsTheLossReconnectsAndPicksItsRouteAgain() async throws {
        let daemon = try PrivatePulseDaemon()
        try await daemon.start()
        defer { daemon.stop() }
        let server = daemon.server
        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: "private_sink", nonMixable: ["private_sink"]),
                                     connect: { () async throws(PulseAudioError) -> any PulseAudioServer in
                                         try await PulseAudioClient.connect(server: server)
                                     })
        try await arbiter.start()
        let route = await arbiter.currentRoute
        XCTAssertEqual(route?.mixing, .nonMixable)
        let parked = await arbiter.parkingSinkName
        let client = try await PulseAudioClient.connect(server: server)
        let loaded = try await client.sinks().map(\.name)
        XCTAssertTrue(loaded.contains(parked), "\(loaded)")

        daemon.stop()
        let lost = await eventually { await arbiter.pastEvents.contains(.pulseAudioUnavailable(.disconnected)) }
        XCTAssertTrue(lost, "the loss is one typed event")
        let routeDuringLoss = await arbiter.currentRoute
        XCTAssertNil(routeDuringLoss)

        try await daemon.start()
        let back = await eventually {
            let events = await arbiter.pastEvents, route = await arbiter.currentRoute, parking = await arbiter.parking
            return events.contains(.pulseAudioBack) && route?.sinkName == "private_sink" && parking.name != nil
        }
        let events = await arbiter.pastEvents
        XCTAssertTrue(back, "reconnected within the reconnect interval, route and parking sink again: \(events)")
        let again = try await PulseAudioClient.connect(server: server)
        let sinks = try await again.sinks().map(\.name)
        XCTAssertTrue(sinks.contains(parked), "the parking sink is loaded on the new daemon: \(sinks)")
        await arbiter.shutdown()
    }
}

actor Outcome {
    private(set) var done = false
    private(set) var error: PulseAudioError?
    func set(_ error: PulseAudioError?) { self.error = error; done = true }
}
