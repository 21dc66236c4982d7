import Coordination
import Foundation
import GStreamer
import GroupProtocol
import GroupSession
import Synchronization
import TestSupport
import XCTest

/// The network medium end to end in one process, without pipelines: a host's medium with one local participant
/// and a member (a real WebSocket link on loopback) with one, both behind fake playback targets that record the
/// commands they get.
final class NetworkMediumTests: XCTestCase {
    /// Records every command; ready at once.
    final class RecordingTarget: CoordinatedPlaybackTarget {
        private let log = Mutex<[DelegatedCommand]>([])
        var commands: [DelegatedCommand] { log.withLock { $0 } }
        func adopt(clock: Clock) async throws {}
        func releaseClock() async {}
        func perform(_ command: DelegatedCommand) async throws { log.withLock { $0.append(command) } }
        func currentItemTime() async -> ClockTime? { .zero }
        func isPlaying() async -> Bool { false }
        func setWaiting(_ waiting: Bool) async {}
        func setDetached(_ detached: Bool) async {}
    }

    private func plays(_ target: RecordingTarget) -> [ClockTime] {
        target.commands.compactMap { if case .play(_, _, let at) = $0.kind { at } else { nil } }
    }

    func testAMembersCommandsMoveTheHostsGroupWithTheMemberAsOriginator() async throws {
        let medium = PlaybackCoordinationMedium()
        let host = SessionHost(medium: medium, configuration: .init(token: "t", items: ["event"], media: [], clock: nil),
                               log: { _ in })
        let port = try await host.start(host: "127.0.0.1", port: 0)
        let local = RecordingTarget()
        let localCoordinator = PlaybackCoordinator(id: ParticipantID("view1"), defaultIdentifier: "event", target: local)
        try await localCoordinator.coordinate(using: medium)

        let session = try await MemberSession.join(host: "127.0.0.1", port: port, token: "t", name: "test", log: { _ in })
        let link = await session.current
        let remote = RecordingTarget()
        let remoteCoordinator = PlaybackCoordinator(id: ParticipantID("view1"), defaultIdentifier: "event", target: remote)
        let remoteEvents = await remoteCoordinator.events()
        try await remoteCoordinator.coordinate(using: link.medium)
        let participants = await medium.participants().map(\.id.rawValue)
        XCTAssertEqual(participants, ["m1.view1", "view1"])

        // A play from the host's view: both prepare, then both get the same instant C on the shared clock.
        try await localCoordinator.coordinatePlay()
        let bothStarted = await eventually(timeout: .seconds(5)) { !self.plays(remote).isEmpty }
        XCTAssertTrue(bothStarted, "the member's view was told to start: \(remote.commands)")
        XCTAssertEqual(plays(remote), plays(local), "one start instant for the host's view and the member's")
        let margin = await medium.startMargin
        XCTAssertGreaterThanOrEqual(margin, SessionHost.networkMarginBase, "the margin covers the network")

        // A seek from the member's view reaches the host's view with the member's view as originator.
        try await remoteCoordinator.coordinateSeek(to: .seconds(7))
        let prepared = local.commands.last { if case .buffer(let t, _) = $0.kind { t == .seconds(7) } else { false } }
        XCTAssertEqual(prepared?.originator, ParticipantID("m1.view1"))
        let told = await eventually(timeout: .seconds(5)) {
            await localCoordinator.commandLog.contains { $0.originator == ParticipantID("m1.view1") }
        }
        XCTAssertTrue(told)
        // The member hears the jump too, as its own (not another participant's).
        var heard: CoordinatorEvent?
        for await event in remoteEvents {
            if case .timeJumped = event { heard = event; break }
        }
        XCTAssertEqual(heard, .timeJumped(to: .seconds(7), originator: ParticipantID("m1.view1"), byOtherParticipant: false))

        // A rate change from the member: the host's view prepares at 2× for it, and plays at 2× with the member's start.
        try await remoteCoordinator.coordinateRate(2)
        let fast = local.commands.last { if case .buffer(_, let rate) = $0.kind { rate == 2 } else { false } }
        XCTAssertEqual(fast?.originator, ParticipantID("m1.view1"))
        let fastStarts = await eventually(timeout: .seconds(5)) {
            remote.commands.contains { if case .play(_, 2, _) = $0.kind { true } else { false } }
        }
        XCTAssertTrue(fastStarts)
        XCTAssertEqual(plays(remote).last, plays(local).last, "one instant for the rate change too")

        // A member's suspension takes only that view out: the host's next command skips it.
        let suspension = await remoteCoordinator.beginSuspension(for: .stallRecovery)
        let suspended = await eventually(timeout: .seconds(5)) {
            await medium.participants().first { $0.id.rawValue == "m1.view1" }?.suspensionReasons == [.stallRecovery]
        }
        XCTAssertTrue(suspended)
        let before = remote.commands.count
        try await localCoordinator.coordinatePause()
        XCTAssertEqual(remote.commands.count, before, "a suspended member view gets no group command")
        // Its end rejoins: it is prepared at the group's (paused) time.
        try await suspension.end()
        XCTAssertGreaterThan(remote.commands.count, before)

        await session.leave()
        let left = await eventually(timeout: .seconds(5)) { await medium.participants().map(\.id.rawValue) == ["view1"] }
        XCTAssertTrue(left, "the member's view left the host's group")
        await host.end()
    }
}
