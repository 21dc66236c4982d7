import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// Issue 15 row 1: three uncoordinated views on a non-mixable route, view 2 preferred, then view 3. Every swap
/// moves streams between null sinks (the route, the arbiter's parking sink); with pulsesink as a view's pipeline
/// clock a stream new on an idle null sink stood still ~1–2 s (status BUFFERING 0%), and the view stayed behind
/// the others for good (the demoted view after the swap, or the preferred one at its start). No view's position
/// may stand still, from the start through the swap (`PositionWatch`: sampled every 50 ms; real pipelines, the
/// test daemon's null sinks).
final class RouteSwapClockTests: PulseTestCase {
    /// Longer than any scheduling hiccup of a busy two-core machine, far shorter than the 1–2 s freezes.
    private let longestAllowedStandStill: Duration = .milliseconds(600)

    func testNoViewStandsStillWhenTheNonMixableRouteSwapsViews() async throws {
        let pulse = self.pulse!
        let living = try await pulse.nullSink("living", properties: "multiview.non-mixable=1")
        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: living, preferredAudio: 2))
        try await arbiter.start()
        let started = try await RoutedViews.start(arbiter, files: RoutingMedia.angles.prefix(3).map(\.file))
        views = started
        let players = started.players
        func position(_ i: Int) async -> Double? { await players[i].queryPosition()?.seconds }

        // From the start (each view has just been told to play) until every view has played 4 s of media: the
        // preferred view's stream is moved from the parking sink to the route in that time.
        let opening = await PositionWatch.sample(targets: [4, 4, 4], timeout: .seconds(25), position: position)
        let onRoute = (try? await pulse.viewsOn(living, arbiter)) ?? []
        XCTAssertEqual(onRoute, [2], "only view 2 on the route before the swap")
        XCTAssertTrue(opening.allReached, "not every view played to 4 s within 25 s: \(opening)")
        XCTAssertLessThan(opening.longestStandStill, longestAllowedStandStill, "a view stood still at its start: \(opening)")

        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        var targets: [Double] = []
        for i in players.indices { targets.append(((await position(i)) ?? 0) + 3) }
        let swap = await PositionWatch.sample(targets: targets, timeout: .seconds(15), position: position)
        let swapped = (try? await pulse.viewsOn(living, arbiter)) ?? []
        XCTAssertEqual(swapped, [3], "only view 3 on the route after the swap")
        XCTAssertTrue(swap.allReached, "not every view played 3 s more within 15 s after the swap: \(swap)")
        XCTAssertLessThan(swap.longestStandStill, longestAllowedStandStill, "a view stood still after the swap: \(swap)")
        for player in players {
            let state = await player.currentStatus.state
            XCTAssertEqual(state, .playing, "view \(player.view)")
        }
    }
}
