import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
import Coordination
@testable import Routing

/// The external display route: a real second X server (Xvfb) stands for the TV; what it shows is checked on its
/// screen (the clips have distinct background colours).
final class ExternalDisplayTests: XCTestCase {
    private var tv: XvfbDisplay?
    private var views: RoutedViews?

    override func tearDown() async throws {
        await views?.stop()
        views = nil
        tv?.stop()
    }

    private func shownAngle(_ tv: XvfbDisplay, expecting: Int?) async throws -> Int? {
        // Give the new view's frames a moment to arrive, then read the screen (retry while it is changing).
        var seen: Int?
        for _ in 0..<20 {
            seen = angle(ofBackground: try tv.dominantColour())
            if seen == expecting { return seen }
            try await Task.sleep(for: .milliseconds(250))
        }
        return seen
    }

    func testThePreferredViewPlaysOnTheExternalDisplaySwapsAndLocalOnlyViewsStayLocal() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let tv = try XvfbDisplay()
        self.tv = tv
        let before = angle(ofBackground: try tv.dominantColour())
        XCTAssertNil(before, "the TV starts without any clip on it")

        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(
            preferredExternal: 2, localOnly: [3], externalDisplay: tv.name))
        let started = try await RoutedViews.start(arbiter, files: RoutingMedia.angles.prefix(3).map(\.file), audio: .fakeSink)
        views = started

        let first = try await shownAngle(tv, expecting: 2)
        XCTAssertEqual(first, 2, "the TV shows view 2 (angle2's background)")
        var active: [Bool] = []
        for p in started.players { active.append(await p.isExternalVideoActive) }
        XCTAssertEqual(active, [false, true, false], "only view 2's pipeline feeds the external sink")

        await arbiter.setPreferredParticipantForExternalPlayback(1)
        let swapped = try await shownAngle(tv, expecting: 1)
        XCTAssertEqual(swapped, 1, "after the swap the TV shows view 1")

        await arbiter.setPreferredParticipantForExternalPlayback(3)
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.externalPlaybackNotAllowed(view: 3)), "\(events)")
        try await Task.sleep(for: .milliseconds(500))
        let still = try await shownAngle(tv, expecting: 1)
        XCTAssertEqual(still, 1, "a local-only view never takes the TV")
        let owner = await arbiter.externalPlaybackOwner
        XCTAssertEqual(owner, 1)

        // Every view kept playing locally throughout.
        for p in started.players {
            let state = await p.currentStatus.state
            XCTAssertEqual(state, .playing, "\(p.view)")
        }
        XCTAssertTrue(events.contains(.externalPlaybackOwner(view: 2, display: tv.name)))
        XCTAssertTrue(events.contains(.externalPlaybackOwner(view: 1, display: tv.name)))
    }

    /// Coordinated views on a stage with the external display: swapping which view the TV shows never pulls the
    /// views apart (both branches of a view run on its pipeline clock, which the group shares).
    func testCoordinatedViewsStayAlignedWhileTheExternalDisplaySwaps() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let tv = try XvfbDisplay()
        self.tv = tv
        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(preferredExternal: 1, externalDisplay: tv.name))
        try await arbiter.start()
        var configuration = StageConfiguration(sources: RoutingMedia.angles.prefix(2).map { MediaSource(RoutingMedia.path($0.file)) },
                                               headless: true, duration: 30, audio: .fakeSink)
        configuration.coordination = CoordinatedStage(itemIdentifier: "routing-\(UInt32.random(in: 0...UInt32.max))")
        configuration.routing = arbiter
        let stage = Stage(configuration: configuration, reporter: Notes())
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let run = Task { await stage.run(commands: commands) }
        defer { input.yield(.quit) }

        let playing = await eventually(timeout: .seconds(20)) {
            let players = await stage.currentPlayers
            guard players.count == 2 else { return false }
            for p in players where await p.currentStatus.state != .playing { return false }
            return true
        }
        XCTAssertTrue(playing, "both coordinated views play")
        let players = await stage.currentPlayers
        func skewMs() async -> Double? {
            // Sampled back to back; a few milliseconds of that is the sampling itself.
            guard let a = players[0].queryPosition(), let b = players[1].queryPosition() else { return nil }
            return abs(a.seconds - b.seconds) * 1000
        }
        var worst = 0.0, samples = 0
        for (step, view) in [2, 1, 2].enumerated() {
            input.yield(.preferExternal(view))
            let shown = try await shownAngle(tv, expecting: view)
            XCTAssertEqual(shown, view, "step \(step): the TV shows view \(view)")
            for _ in 0..<10 {
                if let s = await skewMs() { worst = max(worst, s); samples += 1 }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        XCTAssertGreaterThan(samples, 20, "positions answered")
        XCTAssertLessThan(worst, 40, "coordinated views stay aligned through the swaps (position skew, ms)")
        for p in players {
            let state = await p.currentStatus.state
            XCTAssertEqual(state, .playing, "\(p.view)")
        }
        input.yield(.quit)
        _ = await run.value
        await arbiter.shutdown()
    }
}
