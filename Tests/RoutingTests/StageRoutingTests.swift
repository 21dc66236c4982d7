import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

final class StageRoutingTests: XCTestCase {
    func testStdinWordsParseToRoutingCommands() {
        XCTAssertEqual(StageCommand.parse("audio 2"), .preferAudio(2))
        XCTAssertEqual(StageCommand.parse("external 3"), .preferExternal(3))
        XCTAssertEqual(StageCommand.parse("audio none"), .preferAudio(nil))
        XCTAssertEqual(StageCommand.parse("external 0"), .preferExternal(nil))
        XCTAssertNil(StageCommand.parse("audio -4"))
        XCTAssertNil(StageCommand.parse("audio x"))
    }

    /// A stage with the arbiter plugged in: `audio N` moves the non-mixable route (checked on the server), a view
    /// that ends gives up its preference, and the tags' labels say who owns what.
    func testStageCommandsSwapTheNonMixableRouteOnTheServer() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let pulse = try await PulseFixture.connect()
        addTeardownBlock { await pulse.tearDown() }
        let living = try await pulse.nullSink("living")
        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: living, nonMixable: [living], preferredAudio: 1))
        try await arbiter.start()
        var configuration = StageConfiguration(sources: RoutingMedia.angles.prefix(3).map { MediaSource(RoutingMedia.path($0.file)) },
                                               headless: true, duration: 20, audio: .pulse(device: nil))
        configuration.routing = arbiter
        let notes = Notes()
        let stage = Stage(configuration: configuration, reporter: notes)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let run = Task { await stage.run(commands: commands) }

        let first = await eventually(timeout: .seconds(15)) { (try? await pulse.viewsOn(living, arbiter)) == [1] }
        XCTAssertTrue(first, "view 1 (preferred) on the non-mixable sink")
        input.yield(.preferAudio(2))
        let second = await eventually { (try? await pulse.viewsOn(living, arbiter)) == [2] }
        let onSink = (try? await pulse.viewsOn(living, arbiter)) ?? []
        XCTAssertTrue(second, "`audio 2` puts view 2 there, alone: \(onSink)")
        let label2 = await arbiter.label(for: 2)
        let label1 = await arbiter.label(for: 1)
        XCTAssertEqual(label2, "♪ \(living)")
        XCTAssertEqual(label1, "audio suppressed")
        input.yield(.preferAudio(7))
        let events = await eventually { await arbiter.pastEvents.contains(.noSuchView(7)) }
        XCTAssertTrue(events, "a request for a view that does not exist is refused with an event")
        let unchanged = try await pulse.viewsOn(living, arbiter)
        XCTAssertEqual(unchanged, [2])
        input.yield(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0, "\(outcome.failures)")
        await arbiter.shutdown()
    }
}

final class Notes: StageReporter, @unchecked Sendable {
    // Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    func status(_ line: String) {}
    func note(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
