import XCTest
@testable import Routing

/// `AudioRoute` (one sink as a route: mixable or not, and why) and `AudioRoutes.list` (the default first). Pure: sinks
/// are values, the server is `FakePulseServer`.
final class AudioRouteTests: XCTestCase {
    private func sink(_ name: String, index: UInt32 = 1, description: String? = nil, properties: [String: String] = [:],
                      driver: String = "module-null-sink.c") -> PulseSink {
        PulseSink(index: index, name: name, description: description ?? name, properties: properties, driver: driver,
                  monitorSource: "\(name).monitor", ownerModule: 4)
    }

    func testAirPlaySinksAreNonMixable() {
        let raop = PulseSink(index: 7, name: "raop_output.shairport", description: "AirPlay", properties: ["raop.ip": "127.0.0.1"],
                             driver: "module-raop-sink.c", monitorSource: "raop_output.shairport.monitor", ownerModule: 3)
        let route = AudioRoute(sink: raop, defaultSinkName: "other")
        XCTAssertEqual(route.nonMixableReason, .airPlay)
        XCTAssertFalse(route.isDefault)
        XCTAssertEqual(AudioRoute(sink: sink("tv", properties: ["raop.name": "TV"]), defaultSinkName: "x").nonMixableReason,
                       .airPlay, "raop.* properties alone mark it")
        XCTAssertEqual(AudioRoute(sink: sink("tv", driver: "raop-sink.c"), defaultSinkName: "x").nonMixableReason,
                       .airPlay, "the driver alone marks it")
        let plain = sink("x")
        XCTAssertEqual(AudioRoute(sink: plain, defaultSinkName: "x").mixing, .mixable)
        XCTAssertTrue(AudioRoute(sink: plain, defaultSinkName: "x").isDefault)
    }

    func testTheSinkPropertyMarksItNonMixableInAnySpelling() {
        for flag in ["1", "true", "TRUE", "yes", "Yes"] {
            let route = AudioRoute(sink: sink("living", properties: [AudioRoute.nonMixableProperty: flag]), defaultSinkName: "x")
            XCTAssertEqual(route.nonMixableReason, .sinkProperty, flag)
            XCTAssertTrue(route.isNonMixable, flag)
        }
        for flag in ["0", "false", "no", ""] {
            let route = AudioRoute(sink: sink("living", properties: [AudioRoute.nonMixableProperty: flag]), defaultSinkName: "x")
            XCTAssertNil(route.nonMixableReason, "'\(flag)'")
            XCTAssertEqual(route.mixing, .mixable, "'\(flag)'")
        }
    }

    func testTheUsersMarkComesFirst() {
        let both = sink("tv", properties: [AudioRoute.nonMixableProperty: "1", "raop.ip": "10.0.0.2"])
        XCTAssertEqual(AudioRoute(sink: both, defaultSinkName: "x", markedNonMixable: ["tv"]).nonMixableReason, .markedByUser)
        XCTAssertEqual(AudioRoute(sink: both, defaultSinkName: "x").nonMixableReason, .sinkProperty)
        XCTAssertEqual(AudioRoute(sink: sink("kitchen"), defaultSinkName: "x", markedNonMixable: ["kitchen"]).mixing,
                       .nonMixable)
        XCTAssertEqual(AudioRoute(sink: sink("kitchen"), defaultSinkName: "x", markedNonMixable: ["living"]).mixing,
                       .mixable, "only the sinks named")
    }

    func testTheRoutesLine() {
        let living = AudioRoute(sink: sink("living-room", description: "Living room"), defaultSinkName: "living-room",
                                markedNonMixable: ["living-room"])
        XCTAssertEqual(living.description, "living-room (Living room)  non-mixable: marked with --non-mixable  [default]")
        XCTAssertEqual(AudioRoute(sink: sink("speakers"), defaultSinkName: "x").description, "speakers  mixable",
                       "a description equal to the name is not repeated")
        XCTAssertEqual(AudioRoute(sink: sink("s", description: ""), defaultSinkName: "s").description, "s  mixable  [default]")
    }

    func testTheListPutsTheDefaultFirstThenBySinkIndex() async throws {
        let server = FakePulseServer(defaultSink: "speakers")
        let tv = server.addSink("tv", nonMixable: true)
        let kitchen = server.addSink("kitchen")
        let routes = try await AudioRoutes.list(client: server, markedNonMixable: ["kitchen"])
        XCTAssertEqual(routes.map(\.sinkName), ["speakers", "tv", "kitchen"])
        XCTAssertLessThan(tv, kitchen)
        XCTAssertEqual(routes.map(\.isDefault), [true, false, false])
        XCTAssertEqual(routes.map(\.nonMixableReason), [nil, .sinkProperty, .markedByUser])

    }

    func testAServerThatWentAwayIsItsTypedError() async {
        let server = FakePulseServer()
        server.disconnect()
        do {
            _ = try await AudioRoutes.list(client: server)
            XCTFail("listed the routes of a server that went away")
        } catch {
            XCTAssertEqual(error, .disconnected)
        }
    }
}
