import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// The non-mixable route is a real AirPlay receiver: shairport-sync on 127.0.0.1 (Scripts/airplay-receiver), fed by
/// PulseAudio's module-raop-sink. The RAOP sink is recognised as non-mixable by itself (no --non-mixable), only the
/// preferred view's stream goes there (checked on the server, before and after a swap), and what the receiver hands
/// out is the preferred view's tone (FFT).
///
/// The RAOP sink lives in a PulseAudio daemon of this test's own (`PulseKillFixture`: `PULSE_SERVER` points there
/// for the test), never in the shard's shared daemon: PulseAudio 16.1's module-raop-sink can abort its whole daemon
/// as it connects, and that must never take the next tests' daemon with it. (A race in PulseAudio: when the RTSP
/// RECORD reply comes back before the sink's I/O thread has handled the CONNECTED message posted just before it,
/// the thread finds a streamable connection without its poll item and fails `pa_assert(pollfd)` at
/// raop-sink.c:570, SIGABRT; `RAOPConnectRace`.) When the daemon dies, the test says so (signal, end of its log)
/// instead of "no audio".
final class AirPlayTests: PulseTestCase {
    private var receiverDirectory: String?
    private var ownDaemon: PulseKillFixture?

    override func setUp() async throws {
        ownDaemon = try await PulseKillFixture()
        try await super.setUp()
    }

    override func tearDown() async throws {
        try await super.tearDown()
        if let receiverDirectory {
            _ = try? runTool(["bash", RoutingMedia.root.appendingPathComponent("Scripts/airplay-receiver").path, "stop", receiverDirectory])
            try? FileManager.default.removeItem(atPath: receiverDirectory)
        }
        await ownDaemon?.tearDown()
        ownDaemon = nil
    }

    /// When the test's daemon has died: fails the test saying so (signal, end of its log) and returns true, so the
    /// test stops there instead of reporting what a dead daemon cannot do ("no audio", a view not on the sink).
    private func daemonDied(before step: String) -> Bool {
        guard let death = ownDaemon?.daemon.death else { return false }
        XCTFail("the AirPlay sink's PulseAudio daemon died before \(step): \(death)")
        return true
    }

    /// The receiver's output (s16le 44.1 kHz stereo), left channel, the last `seconds`.
    private func lastReceived(seconds: Double, in directory: String) -> ArraySlice<Float> {
        guard let data = FileManager.default.contents(atPath: directory + "/received.raw") else { return [] }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let left = stride(from: 0, to: samples.count - 1, by: 2).map { Float(samples[$0]) / 32768 }
        return left.suffix(Int(seconds * 44_100))
    }

    private func dominant(_ x: ArraySlice<Float>) -> Double {
        // Spectrum.dominant assumes 48 kHz; rescale the frequency for 44.1 kHz.
        Spectrum.dominant(x, from: 200 * 48 / 44.1, to: 2000 * 48 / 44.1).frequency * 44.1 / 48
    }

    func testTheNonMixableRouteIsARealAirPlayReceiverThatHearsOnlyThePreferredView() async throws {
        let pulse = self.pulse!
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mv-airplay-\(pulse.tag)").path
        let port = 5100 + Int.random(in: 0..<800)
        let started = try runTool(["bash", RoutingMedia.root.appendingPathComponent("Scripts/airplay-receiver").path,
                                   "start", directory, "\(port)"])
        receiverDirectory = directory
        guard started.status == 0 else {
            return XCTFail("the AirPlay receiver did not start (Scripts/setup installs shairport-sync, avahi-daemon): \(started.output)")
        }
        let sinkName = "airplay_\(pulse.tag)"
        let daemon = try XCTUnwrap(ownDaemon).daemon
        try await pulse.loadModule("module-raop-sink",
                             arguments: "server=127.0.0.1:\(port) protocol=UDP encryption=RSA codec=ALAC sink_name=\(sinkName)")
        // Before any stream reaches the sink (it connects to the receiver when one does): see RAOPConnectRace.
        try await RAOPConnectRace.shieldIOThread(ofDaemon: try XCTUnwrap(daemon.pid, daemon.death ?? "no daemon pid"))

        let routes = try await AudioRoutes.list(client: pulse.client)
        let airplay = try XCTUnwrap(routes.first { $0.sinkName == sinkName }, "\(routes)")
        XCTAssertEqual(airplay.nonMixableReason, .airPlay)

        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: sinkName, preferredAudio: 2))
        try await arbiter.start()
        views = try await RoutedViews.start(arbiter, files: RoutingMedia.angles.prefix(2).map(\.file))
        let on = await eventually { (try? await pulse.viewsOn(sinkName, arbiter)) == [2] }
        if daemonDied(before: "view 2 was on the AirPlay sink") { return }
        XCTAssertTrue(on, "only view 2 on the AirPlay sink")

        // About 1.3 s from PulseAudio to the receiver's output (platform notes); wait well past it. What the receiver
        // put out must be view 2's tone. (Only the loudest half second is checked: file playback into a RAOP sink goes
        // silent after about 2 s, also with a bare gst-launch-1.0 playbin3 — see README — so no swap by ear here.)
        // The RAOP session's set-up time varies (one clean-clone CI run heard nothing within 4 s), so the output is
        // read again every half second for up to 15 s until a loud half second is there, or the daemon is gone.
        func loudestHalfSecond() -> ArraySlice<Float>? {
            let received = lastReceived(seconds: 30, in: directory)
            guard received.count > 44_100 else { return nil }
            let halves = stride(from: received.startIndex, to: received.endIndex - 22_050, by: 22_050)
                .map { received[$0..<($0 + 22_050)] }
            return halves.max { Spectrum.rms($0) < Spectrum.rms($1) }
        }
        var loudestSoFar: ArraySlice<Float>?
        let deadline = ContinuousClock.now + .seconds(15)
        try await Task.sleep(for: .seconds(4))
        repeat {
            loudestSoFar = loudestHalfSecond()
            if let loudestSoFar, Spectrum.rms(loudestSoFar) > 0.05 { break }
            if daemon.death != nil { break }
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        if daemonDied(before: "the receiver heard view 2") { return }
        let loudest = try XCTUnwrap(loudestSoFar, "the receiver put out no audio (its daemon still runs)")
        XCTAssertGreaterThan(Spectrum.rms(loudest), 0.05, "the receiver got sound, not silence")
        XCTAssertEqual(dominant(loudest), 660, accuracy: 12, "the AirPlay receiver hears view 2 (660 Hz), not view 1 (440 Hz)")

        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(1)
        let swapped = await eventually { (try? await pulse.viewsOn(sinkName, arbiter)) == [1] }
        if daemonDied(before: "the swap was seen") { return }
        XCTAssertTrue(swapped, "after the swap only view 1 is on the AirPlay sink")
    }
}
