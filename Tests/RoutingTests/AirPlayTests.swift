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
final class AirPlayTests: PulseTestCase {
    private var receiverDirectory: String?

    override func tearDown() async throws {
        try await super.tearDown()
        if let receiverDirectory {
            _ = try? runTool(["bash", RoutingMedia.root.appendingPathComponent("Scripts/airplay-receiver").path, "stop", receiverDirectory])
            try? FileManager.default.removeItem(atPath: receiverDirectory)
        }
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
        try await pulse.loadModule("module-raop-sink",
                             arguments: "server=127.0.0.1:\(port) protocol=UDP encryption=RSA codec=ALAC sink_name=\(sinkName)")

        let routes = try await AudioRoutes.list(client: pulse.client)
        let airplay = try XCTUnwrap(routes.first { $0.sinkName == sinkName }, "\(routes)")
        XCTAssertEqual(airplay.nonMixableReason, .airPlay)

        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: sinkName, preferredAudio: 2))
        try await arbiter.start()
        views = try await RoutedViews.start(arbiter, files: RoutingMedia.angles.prefix(2).map(\.file))
        let on = await eventually { (try? await pulse.viewsOn(sinkName, arbiter)) == [2] }
        XCTAssertTrue(on, "only view 2 on the AirPlay sink")

        // About 1.3 s from PulseAudio to the receiver's output (platform notes); wait well past it. What the receiver
        // put out must be view 2's tone. (Only the loudest half second is checked: file playback into a RAOP sink goes
        // silent after about 2 s, also with a bare gst-launch-1.0 playbin3 — see README — so no swap by ear here.)
        // The RAOP session's set-up time varies (one clean-clone CI run heard nothing within 4 s), so the output is
        // read again every half second for up to 15 s until a loud half second is there.
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
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        let loudest = try XCTUnwrap(loudestSoFar, "the receiver put out no audio")
        XCTAssertGreaterThan(Spectrum.rms(loudest), 0.05, "the receiver got sound, not silence")
        XCTAssertEqual(dominant(loudest), 660, accuracy: 12, "the AirPlay receiver hears view 2 (660 Hz), not view 1 (440 Hz)")

        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(1)
        let swapped = await eventually { (try? await pulse.viewsOn(sinkName, arbiter)) == [1] }
        XCTAssertTrue(swapped, "after the swap only view 1 is on the AirPlay sink")
    }
}
