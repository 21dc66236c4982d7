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

    /// Records every command; its preparations wait at a gate while it is closed; like the Player, it refuses a
    /// "play at C" that comes after C (on the system clock: host and member share this machine's).
    final class GatedTarget: CoordinatedPlaybackTarget {
        private let log = Mutex<[DelegatedCommand]>([])
        private let gate = TestGate()
        private let outcomes = Mutex<(started: [ClockTime], refused: [ClockTime])>(([], []))
        var commands: [DelegatedCommand] { log.withLock { $0 } }
        var started: [ClockTime] { outcomes.withLock { $0.started } }
        var refused: [ClockTime] { outcomes.withLock { $0.refused } }
        var waitingAtGate: Int { gate.waiting }
        func closeGate() { gate.close() }
        func openGate() { gate.open() }
        func adopt(clock: Clock) async throws {}
        func releaseClock() async {}
        func perform(_ command: DelegatedCommand) async throws {
            log.withLock { $0.append(command) }
            switch command.kind {
            case .buffer:
                await gate.pass()
            case .play(_, _, let at):
                let inTime = Clock.systemClock().time < at
                outcomes.withLock { if inTime { $0.started.append(at) } else { $0.refused.append(at) } }
                guard inTime else { throw CoordinationError.missedStartInstant }
            case .pause:
                break
            }
        }
        func currentItemTime() async -> ClockTime? { .zero }
        func isPlaying() async -> Bool { false }
        func setWaiting(_ waiting: Bool) async {}
        func setDetached(_ detached: Bool) async {}
    }

    /// With a member, the host predicts a playing command's instant (`StartPrediction`): it is chosen with the
    /// command and sent to the member with its "prepare", so the host's own view is started without waiting for the
    /// member's readiness to travel back. A member ready only after the instant was still told it (and refused it,
    /// as a late "play at" is refused) and is caught up onto the group's timeline.
    func testTheHostPredictsTheInstantSendsItWithThePrepareAndCatchesUpAMemberReadyTooLate() async throws {
        let remote = GatedTarget()
        let group = try await HostAndMember(remote: remote)
        let (medium, local, localCoordinator) = (group.medium, group.local, group.localCoordinator)
        try await localCoordinator.coordinatePlay()
        let playing = await eventually(timeout: .seconds(5)) { !remote.started.isEmpty }
        XCTAssertTrue(playing, "the member's view started: \(remote.commands)")
        let predicts = await medium.startPrediction
        XCTAssertNotNil(predicts, "a host with a member predicts its playing barriers")
        // The heartbeat's pongs say when each ping arrived on the member's clock: the delivery is measured one way.
        let measuredOneWay = await eventually(timeout: .seconds(5)) { await group.host.memberOneWayDelays["m1"] != nil }
        XCTAssertTrue(measuredOneWay, "no one-way delay from the member's pongs")
        let oneWays = await group.host.memberOneWayDelays["m1"] ?? []
        let roundTrip = await group.host.memberRoundTrips["m1"] ?? .zero
        XCTAssertTrue(oneWays.allSatisfy { $0 >= .zero && $0 < .seconds(1) }, "\(oneWays)")
        let delivery = await medium.startPrediction?.delivery
        XCTAssertEqual(delivery, SessionHost.predictionDelivery(slowestOneWay: oneWays.max(), slowestRoundTrip: roundTrip))

        remote.closeGate()
        let seek = Task { try await localCoordinator.coordinateSeek(to: .seconds(7)) }
        let chosen = await eventually(timeout: .seconds(5)) {
            let state = await medium.groupState(for: "event")
            return state?.anchorMedia == .seconds(7) && state?.anchorClock != nil && !self.plays(local).isEmpty
                && self.plays(local).last == state?.anchorClock && remote.waitingAtGate == 1
        }
        // (The member's view reaches its gate once the prepare has crossed the link: the test waits for both.)
        XCTAssertTrue(chosen, "the host's view was told the instant while the member's view prepared: "
                      + "gate \(remote.waitingAtGate), local plays \(plays(local))")
        let during = await medium.groupState(for: "event")
        let instant = try XCTUnwrap(during?.anchorClock)
        // Ready well after the instant: the member refuses it, and is caught up.
        while Clock.systemClock().time < instant + .milliseconds(200) { try await Task.sleep(for: .milliseconds(20)) }
        remote.openGate()
        try await seek.value
        XCTAssertEqual(remote.refused, [instant], "the member was told the instant with its prepare")
        let after = await medium.groupState(for: "event")
        let state = try XCTUnwrap(after)
        XCTAssertEqual(state.anchorClock, instant, "the group kept its instant")
        let caughtUp = try XCTUnwrap(remote.started.last)
        XCTAssertGreaterThan(caughtUp, instant)
        let lastPlay = remote.commands.last { if case .play = $0.kind { true } else { false } }
        guard case .play(let media, _, let at)? = lastPlay?.kind else { return XCTFail("no play: \(remote.commands)") }
        XCTAssertEqual(at, caughtUp)
        XCTAssertEqual(state.mediaTime(at: caughtUp), media, "caught up onto the group's timeline")
        let lastTiming = await medium.lastBarrierTiming
        let timing = try XCTUnwrap(lastTiming)
        XCTAssertTrue(timing.predicted)
        XCTAssertEqual(timing.missedStart, 1)
        await group.session.leave()
        await group.host.end()
    }

    /// A host's medium with one local view (`local`) and a member joined over a real WebSocket on loopback, whose
    /// one view plays on `remote`.
    private struct HostAndMember {
        let medium: PlaybackCoordinationMedium
        let host: SessionHost
        let local: RecordingTarget
        let localCoordinator: PlaybackCoordinator
        let session: MemberSession
        let remoteCoordinator: PlaybackCoordinator

        init(remote: any CoordinatedPlaybackTarget) async throws {
            medium = PlaybackCoordinationMedium()
            host = SessionHost(medium: medium, configuration: .init(token: "t", items: ["event"], media: [], clock: nil),
                               log: { _ in })
            let port = try await host.start(host: "127.0.0.1", port: 0)
            local = RecordingTarget()
            localCoordinator = PlaybackCoordinator(id: ParticipantID("view1"), defaultIdentifier: "event", target: local)
            try await localCoordinator.coordinate(using: medium)
            session = try await MemberSession.join(host: "127.0.0.1", port: port, token: "t", name: "test", log: { _ in })
            let link = await session.current
            remoteCoordinator = PlaybackCoordinator(id: ParticipantID("view1"), defaultIdentifier: "event", target: remote)
            try await remoteCoordinator.coordinate(using: link.medium)
        }
    }

    private func plays(_ target: RecordingTarget) -> [ClockTime] {
        target.commands.compactMap { if case .play(_, _, let at) = $0.kind { at } else { nil } }
    }

    func testAMembersCommandsMoveTheHostsGroupWithTheMemberAsOriginator() async throws {
        let remote = RecordingTarget()
        let group = try await HostAndMember(remote: remote)
        let (medium, host, session) = (group.medium, group.host, group.session)
        let (local, localCoordinator, remoteCoordinator) = (group.local, group.localCoordinator, group.remoteCoordinator)
        let remoteEvents = await remoteCoordinator.events()
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
