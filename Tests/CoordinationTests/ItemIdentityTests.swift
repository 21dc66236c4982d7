import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import TestSupport
import XCTest

/// Group state is applied only between players on the same item; an item without group state takes the state
/// of the first participant that joins with it.
final class ItemIdentityTests: XCTestCase {
    private let frame = 1.0 / 30

    func testAViewOnAnotherItemIgnoresTheGroupsCommandsAndMakesItsOwnStateTheGroupState() async throws {
        let set = try await CoordinatedViews.make(Array(Media.angles.prefix(2)), item: "event")
        let other = try await set.add(Media.angles[2], number: 3, item: "other")
        let otherEvents = await other.coordinator.eventLog(clock: set.clock)
        let otherItem = await other.coordinator.itemIdentifier
        XCTAssertEqual(otherItem, "other")

        // "other" has no group state: the view's own state (paused at 7 s) becomes the group state when it joins.
        let noGroup = await set.medium.groupState(for: "other")
        XCTAssertNil(noGroup)
        try await other.player.seekLocally(to: .seconds(7))
        try await other.coordinator.join()
        let adopted = try unwrap(await set.medium.groupState(for: "other"), "joining made no group state")
        XCTAssertFalse(adopted.isPlaying)
        XCTAssertEqual(adopted.rate, 1)
        XCTAssertEqual(adopted.anchorMedia.seconds, 7, accuracy: frame, "group state of \"other\": \(adopted)")
        // Its play goes to its own group and starts from its own time, not from the other item's.
        try await other.player.play()
        let otherPlaying = await eventually { await set.allPlaying([2]) }
        check(otherPlaying, "\(await other.player.currentStatus)")
        let otherStart = try unwrap(await other.player.position)
        XCTAssertEqual(otherStart.seconds, 7, accuracy: 0.3)
        let eventGroup = await set.medium.groupState(for: "event")
        XCTAssertNil(eventGroup, "the other item's commands created state for \"event\"")

        // The "event" group plays, seeks and pauses; the "other" view carries on as it was.
        let groupStartNs = set.nowNs
        try await set.playAll(from: 0)
        try await Task.sleep(for: .milliseconds(700))
        try await set.players[1].seek(by: 10)
        let afterSeek = await set.settledPositions()
        XCTAssertGreaterThan(try XCTUnwrap(afterSeek[0]).seconds, 10, "the event group did not seek")
        XCTAssertLessThan(try XCTUnwrap(afterSeek[2]).seconds, 10, "the other item's view followed the seek: \(afterSeek)")
        try await set.players[0].pause()
        let groupPaused = await eventually { await set.allPaused([0, 1]) }
        XCTAssertTrue(groupPaused)
        try await Task.sleep(for: .milliseconds(500))
        let otherStatus = await other.player.currentStatus
        XCTAssertTrue(otherStatus.state == .playing && otherStatus.waitingToPlay == nil, "the other item's view was paused")

        // Its frames ran on without a jump or a stop through all of it.
        let renders = set.frames(since: groupStartNs, views: [3]).sorted { $0.renderClockNs < $1.renderClockNs }
        XCTAssertGreaterThan(renders.count, 30)
        for (a, b) in zip(renders, renders.dropFirst()) {
            let step = (Double(b.mediaTimeNs) - Double(a.mediaTimeNs)) / 1e9
            XCTAssertTrue(step > 0 && step < 3 * frame, "the other view jumped from \(a.mediaTimeNs) to \(b.mediaTimeNs)")
            XCTAssertLessThan(Double(b.renderClockNs - a.renderClockNs) / 1e6, 150, "the other view stopped rendering")
        }
        // None of the event group's commands or announcements reached it.
        let log = await other.coordinator.commandLog
        XCTAssertFalse(log.isEmpty, "the other view's own commands are missing")
        XCTAssertTrue(log.allSatisfy { $0.expectedItemIdentifier == "other" }, "commands reaching the other view: \(log)")
        for originator in [set.views[0].coordinator.id, set.views[1].coordinator.id] {
            XCTAssertFalse(log.contains { $0.originator == originator }, "\(originator)'s command reached the other view")
            let announced = otherEvents.values.contains {
                switch $0 {
                case .rateChanged(_, let o, _), .timeJumped(_, let o, _): return o == originator
                default: return false
                }
            }
            XCTAssertFalse(announced, "\(originator)'s change was announced to the other view: \(otherEvents.values)")
        }
        let eventLog = await set.views[0].coordinator.commandLog
        XCTAssertTrue(eventLog.allSatisfy { $0.expectedItemIdentifier == "event" })
        // Views on different items are never compared: the event views' records are aligned among themselves.
        let items = Set(set.frames(since: 0, views: [3]).map(\.item))
        XCTAssertEqual(items, ["other"])
        await set.tearDown()
    }

    func testTheDefaultIdentityIsTheNormalisedURI() async throws {
        XCTAssertEqual(PlayerCoordination.normalize("FILE:///work/Media/./x/../angle1.mp4"), "file:///work/Media/angle1.mp4")
        XCTAssertEqual(PlayerCoordination.normalize("HTTP://Example.COM/a/../b.mp4"), "http://example.com/b.mp4")

        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        // Two views on the same file, spelt differently; one on another file. No custom identifiers.
        let roundabout = Media.root.appendingPathComponent("Media/../Media/angle1-wide.mp4").path
        let a = try await set.add(Media.angles[0], number: 1, item: nil)
        let b = try await set.add("file://" + roundabout, number: 2, item: nil)
        let c = try await set.add(Media.angles[1], number: 3, item: nil)
        let ia = await a.coordinator.itemIdentifier, ib = await b.coordinator.itemIdentifier
        let ic = await c.coordinator.itemIdentifier
        XCTAssertEqual(ia, ib)
        XCTAssertNotEqual(ia, ic)
        XCTAssertTrue(ia.hasPrefix("file:///") && ia.hasSuffix("/Media/angle1-wide.mp4"), ia)

        try await a.player.play()
        let pair = await eventually { await set.allPlaying([0, 1]) }
        check(pair, "\(await set.statuses())")
        let third = await c.player.currentStatus
        XCTAssertEqual(third.state, .stopped, "a view on another URI followed the play")
        let cLog = await c.coordinator.commandLog
        XCTAssertTrue(cLog.isEmpty, "\(cLog)")
        await set.tearDown()
    }
}
