import XCTest
@testable import Routing

/// The route model (pure) and the client's answer without a server.
final class AudioRouteModelTests: XCTestCase {
    func testAirPlaySinksAreNonMixable() {
        let raop = PulseSink(index: 7, name: "raop_output.shairport", description: "AirPlay", properties: ["raop.ip": "127.0.0.1"],
                             driver: "module-raop-sink.c", monitorSource: "raop_output.shairport.monitor", ownerModule: 3)
        let route = AudioRoute(sink: raop, defaultSinkName: "other")
        XCTAssertEqual(route.nonMixableReason, .airPlay)
        XCTAssertFalse(route.isDefault)
        let plain = PulseSink(index: 8, name: "x", description: "x", properties: [:], driver: "module-null-sink.c",
                              monitorSource: "x.monitor", ownerModule: 4)
        XCTAssertEqual(AudioRoute(sink: plain, defaultSinkName: "x").mixing, .mixable)
        XCTAssertTrue(AudioRoute(sink: plain, defaultSinkName: "x").isDefault)
    }

    func testAnAbsentServerIsOneClearError() async {
        do {
            _ = try await PulseAudioClient.connect(server: "unix:/nonexistent/multiview/native")
            XCTFail("connected to a server that does not exist")
        } catch {
            guard case .unreachable(let code) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, .connectionRefused, "\(error)")
            XCTAssertTrue("\(error)".hasPrefix("PulseAudio is not reachable"))
        }
    }
}
