import Foundation
import GStreamer
import Multiview
import XCTest
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
}
