import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its source element), an internal of Multiview.
@testable import Multiview
import TestSupport
import XCTest

/// Real pipelines: a view that cannot get ready for a group command (its source stops delivering just before a
/// seek, so its preroll never comes) holds the group once, boundedly, is then left behind — the next commands go
/// on without it and never reach it — and is brought back onto the group's timeline once its source delivers
/// again (issue 15: the soak's view 9 held every group command 10 s).
final class LeftBehindPipelineTests: XCTestCase {
    func testAViewThatCannotPrerollIsLeftBehindThenBroughtBackAligned() async throws {
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[0], number: 1, item: "event")
        try await set.add(Media.angles[1], number: 2, item: "event")
        let stuck = try await set.add(Media.angles[3], number: 3, item: "event")
        let source = HeldSource()
        let setup = try stuck.player.pipeline.connect("source-setup") { args in source.set(args.element(at: 1)) }
        // The source is made at load; reload so the handler sees it.
        try await stuck.player.load(MediaSource(Media.angles[3]))
        let events = await stuck.coordinator.eventLog(clock: set.clock)
        try await set.playAll()
        let rendering = await set.waitRendering(since: 0, count: 10)
        check(rendering, "\(await set.statuses())")

        // The source stops delivering; a seek right away: view 3's preroll never comes.
        let pad = try XCTUnwrap(source.element, "no source element was set up").staticPad("src")
        var hold: PadProbe? = pad.addProbe([.buffer, .blocking]) { _ in .ok }
        let proposer = set.views[0].coordinator
        let seekBegan = ContinuousClock.now
        do {
            try await proposer.coordinateSeek(to: .seconds(4))
            XCTFail("the seek succeeded although view 3 could not be ready")
        } catch let error as CoordinationError {
            guard case .participantNotReady(let id, .timedOut) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(id, stuck.coordinator.id)
        }
        let seekTook = ContinuousClock.now - seekBegan
        // The group gave view 3 the minimum wait (4 s), not the 10 s limit; generous for a loaded machine.
        XCTAssertLessThan(seekTook, .seconds(9), "the group waited for view 3 for \(seekTook)")
        let othersPlaying = await eventually(timeout: .seconds(5)) { await set.allPlaying([0, 1]) }
        check(othersPlaying, "the others did not go on without view 3: \(await set.statuses())")
        var info = await set.medium.participants()
        XCTAssertEqual(info.first { $0.id == stuck.coordinator.id }?.suspensionReasons, [.coordinatedPlaybackNotPossible])
        let told = await eventually(timeout: .seconds(2)) {
            events.values.contains(.suspensionBegan(.coordinatedPlaybackNotPossible))
        }
        XCTAssertTrue(told, "view 3 was not told it was left behind")

        // Later commands go on without it and never reach it.
        let commandsToStuck = await stuck.coordinator.commandLog.count
        try await proposer.coordinatePause()
        try await proposer.coordinateSeek(to: .seconds(2))
        try await proposer.coordinatePlay()
        let loggedMeanwhile = await stuck.coordinator.commandLog.count
        XCTAssertEqual(loggedMeanwhile, commandsToStuck, "a group command reached the view left behind")

        // Its source delivers again: the medium brings it back onto the group's timeline.
        hold = nil
        withExtendedLifetime(hold) {}
        let releasedNs = set.nowNs
        let back = await eventually(timeout: .seconds(25)) {
            let everyone = await set.medium.participants()
            return everyone.allSatisfy { $0.isReady && $0.suspensionReasons.isEmpty }
        }
        info = await set.medium.participants()
        check(back, "view 3 was not brought back: \(info), statuses \(await set.statuses()), events \(events.values)")
        let allPlaying = await eventually(timeout: .seconds(5)) { await set.allPlaying() }
        check(allPlaying, "\(await set.statuses())")
        let renderingAgain = await set.waitRendering(since: releasedNs, views: [3], count: 10)
        XCTAssertTrue(renderingAgain, "view 3 renders nothing after it was brought back")
        try await Task.sleep(for: .seconds(1.2))
        assertAligned(set, since: set.nowNs - 800_000_000, minFrames: 15, "after view 3 was brought back")
        withExtendedLifetime(setup) {}
        await set.tearDown()
    }
}
