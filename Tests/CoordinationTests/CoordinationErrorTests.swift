import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import TestSupport
import XCTest

/// `coordinate(using:)` can fail, and says why.
final class CoordinationErrorTests: XCTestCase {
    func testCoordinatingTwiceFailsWithAlreadyConnected() async throws {
        let set = try await CoordinatedViews.make([Media.angles[0]])
        let coordination = set.views[0]
        let connected = await coordination.coordinator.isConnected
        XCTAssertTrue(connected)
        do {
            try await coordination.coordinator.coordinate(using: set.medium)
            XCTFail("coordinating twice succeeded")
        } catch let error as CoordinationError {
            XCTAssertEqual(error, .alreadyConnected(to: set.medium.name))
        }
        // Another medium is refused as well, and the first connection keeps working.
        let other = PlaybackCoordinationMedium(name: "other")
        do {
            try await coordination.coordinate(using: other)
            XCTFail("coordinating with a second medium succeeded")
        } catch let error as CoordinationError {
            XCTAssertEqual(error, .alreadyConnected(to: set.medium.name))
        }
        let onOther = await other.participants()
        XCTAssertTrue(onOther.isEmpty, "\(onOther)")
        try await set.playAll()
        XCTAssertTrue(set.players[0].pipeline.pipelineClock.map { $0 === set.medium.clock } ?? false)
        await set.tearDown()
    }

    func testTheSameParticipantTwiceOnOneMediumFailsWithDuplicateParticipant() async throws {
        let medium = PlaybackCoordinationMedium()
        let first = SlowTarget(delay: .zero), second = SlowTarget(delay: .zero)
        let a = PlaybackCoordinator(id: ParticipantID("twin"), defaultIdentifier: "event", target: first)
        let b = PlaybackCoordinator(id: ParticipantID("twin"), defaultIdentifier: "event", target: second)
        try await a.coordinate(using: medium)
        do {
            try await b.coordinate(using: medium)
            XCTFail("the same participant id connected twice")
        } catch let error as CoordinationError {
            XCTAssertEqual(error, .duplicateParticipant(ParticipantID("twin")))
        }
        let bConnected = await b.isConnected
        XCTAssertFalse(bConnected, "the refused coordinator believes it is connected")
        let participants = await medium.participants()
        XCTAssertEqual(participants.map(\.id), [ParticipantID("twin")])

        // Two players with the same view number get the same participant id: the second is refused and goes
        // back to its own clock.
        let set = try await CoordinatedViews.make([Media.angles[0]])
        let source = MediaSource(Media.angles[1])
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: "twin")))
        let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: "event")
        do {
            try await coordination.coordinate(using: set.medium)
            XCTFail("a second view1 connected")
        } catch let error as CoordinationError {
            XCTAssertEqual(error, .duplicateParticipant(ParticipantID("view1")))
        }
        // Uncoordinated again: its own commands are not intercepted.
        try await player.load(source)
        try await player.play()
        let playing = await eventually { await player.currentStatus.state == .playing }
        XCTAssertTrue(playing)
        let log = await set.views[0].coordinator.commandLog
        XCTAssertTrue(log.isEmpty, "the refused player's play reached the group: \(log)")
        await player.stop()
        await set.tearDown()
    }
}
