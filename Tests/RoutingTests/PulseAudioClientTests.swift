import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// The libpulse client against the real test daemon, with null sinks of the test's own.
final class PulseAudioClientTests: PulseTestCase {
    func testListsSinksWithPropertiesAndTheRouteModelMarksNonMixableSinks() async throws {
        let speakers = try await pulse.nullSink("speakers")
        let living = try await pulse.nullSink("living", properties: "multiview.non-mixable=1")
        let marked = try await pulse.nullSink("kitchen")

        let sinks = try await pulse.client.sinks()
        let livingSink = try XCTUnwrap(sinks.first { $0.name == living })
        XCTAssertEqual(livingSink.properties["multiview.non-mixable"], "1")
        XCTAssertEqual(livingSink.description, "living")
        XCTAssertEqual(livingSink.monitorSource, "\(living).monitor")
        XCTAssertNotNil(livingSink.ownerModule)

        let routes = try await AudioRoutes.list(client: pulse.client, markedNonMixable: [marked])
        let byName = Dictionary(uniqueKeysWithValues: routes.map { ($0.sinkName, $0) })
        XCTAssertEqual(byName[speakers]?.mixing, .mixable)
        XCTAssertEqual(byName[living]?.mixing, .nonMixable)
        XCTAssertEqual(byName[living]?.nonMixableReason, .sinkProperty)
        XCTAssertEqual(byName[marked]?.nonMixableReason, .markedByUser)
        let defaultName = try await pulse.client.serverDefaultSinkName()
        XCTAssertEqual(routes.first?.sinkName, defaultName, "the default route is listed first")
        XCTAssertEqual(routes.filter(\.isDefault).map(\.sinkName), [defaultName])
        XCTAssertTrue(byName[living]!.description.contains("non-mixable"))
    }

    func testFindsMovesMutesAndSetsTheVolumeOfAViewsStreamAndReportsEvents() async throws {
        let a = try await pulse.nullSink("route_a")
        let b = try await pulse.nullSink("route_b")
        let events = pulse.client.events()
        let collected = EventBox()
        let reader = Task { for await e in events { await collected.add(e) } }
        defer { reader.cancel() }

        var configuration = PlayerConfiguration(view: ViewIdentity(number: 3, name: "angle2-left.webm"),
                                                video: .fakeSink, audio: .pulse(device: a))
        configuration.audioStreamProperties["multiview.instance"] = "client-test-\(pulse.tag)"
        // Our own restore id: module-stream-restore must not remember this test's mute/volume for every later
        // media.role=video stream on the daemon (other tests' views would start muted).
        configuration.audioStreamProperties["module-stream-restore.id"] = "multiview-client-test-\(pulse.tag)"
        let player = try Player(configuration: configuration)
        try await player.load(MediaSource(RoutingMedia.path("angle2-left.webm")))
        try await player.play()
        defer { Task { await player.stop() } }

        let client = pulse.client
        let tag = pulse.tag
        let found = await eventually { (try? await client.sinkInputs().contains { $0.properties["multiview.instance"] == "client-test-\(tag)" }) ?? false }
        XCTAssertTrue(found, "the view's stream shows up on the server")
        // pulsesink creates the stream as "Playback Stream" and renames it from the title tag, which comes with the
        // first buffer just after: the name is the view's once that has reached the server (run 2 of the session 14
        // repeat read it in between).
        let named = await eventually(timeout: .seconds(5)) {
            (try? await client.sinkInputs().contains {
                $0.properties["multiview.instance"] == "client-test-\(tag)" && $0.properties["media.name"] == "angle2-left.webm"
            }) ?? false
        }
        XCTAssertTrue(named, "the view's stream carries the view's name")
        let input = try await XCTUnwrapAsync(client.sinkInputs().first { $0.properties["multiview.instance"] == "client-test-\(tag)" })
        XCTAssertEqual(input.properties["application.name"], "Multiview")
        XCTAssertEqual(input.properties["media.role"], "video")
        XCTAssertEqual(input.properties["media.name"], "angle2-left.webm")
        XCTAssertEqual(input.properties["multiview.view"], "3")
        let indexA = try await pulse.sinkIndex(a)
        XCTAssertEqual(input.sink, indexA)

        try await client.move(sinkInput: input.index, toSink: b)
        try await client.setMute(sinkInput: input.index, true)
        try await client.setVolume(sinkInput: input.index, linear: 0.5)
        let after = try await XCTUnwrapAsync(client.sinkInputs().first { $0.index == input.index })
        let indexB = try await pulse.sinkIndex(b)
        XCTAssertEqual(after.sink, indexB)
        XCTAssertTrue(after.muted)
        XCTAssertEqual(after.volume, 0.5, accuracy: 0.01)

        let extra = try await pulse.nullSink("route_c")
        let extraIndex = try await XCTUnwrapAsync(pulse.sinkIndex(extra))
        let sawAdded = await eventually(timeout: .seconds(5)) { await collected.events.contains(.sinkAdded(extraIndex)) }
        try await pulse.unload(sink: extra)
        let sawAll = await eventually(timeout: .seconds(5)) {
            let e = await collected.events
            return e.contains(.sinkInputChanged(input.index)) && e.contains(.sinkRemoved(extraIndex))
        }
        let seen = await collected.events
        XCTAssertTrue(sawAdded, "subscription reports the sink \(extraIndex) coming: \(seen)")
        XCTAssertTrue(sawAll, "subscription reports stream changes and the sink \(extraIndex) going: \(seen)")
        do {
            try await client.move(sinkInput: input.index, toSink: "no_such_sink_\(tag)")
            XCTFail("moving to a sink that does not exist succeeded")
        } catch {
            XCTAssertEqual(error, .failed(.move(sinkInput: input.index, sink: "no_such_sink_\(tag)"), .noSuchEntity),
                           "libpulse's code is mapped once into a typed cause")
        }
    }
}

/// `XCTUnwrap` for a value computed by an `await`.
func XCTUnwrapAsync<T>(_ value: T?, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) async throws -> T {
    try XCTUnwrap(value, message, file: file, line: line)
}

actor EventBox {
    private(set) var events: [PulseEvent] = []
    func add(_ e: PulseEvent) { events.append(e) }
}
