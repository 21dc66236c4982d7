import Coordination
import Foundation
import GStreamer
import GroupProtocol
import Synchronization

/// A member's view as the host's medium sees it: the playback target behind a proxy `PlaybackCoordinator`
/// (id `member.viewN`). The medium's commands for it (prepare, start at C, pause) become messages to the member,
/// and the member's answer is the command's result: ready, started, or "missed the instant" (the medium then
/// catches it up as it does a late local view).
///
/// Threading: the member connection (an actor) owns the requests in flight; the last preparation the member
/// reported is in a `Mutex`.
final class RemoteViewTarget: CoordinatedPlaybackTarget {
    let participant: String
    /// Strong: the member keeps its proxies (and so this target) only until it is dropped, which releases them.
    private let member: RemoteMember
    /// How long the view's last preparation took on the member, as its answer said (nil until one said it).
    private let reportedPreparation = Mutex<Duration?>(nil)

    init(participant: String, member: RemoteMember) {
        self.participant = participant
        self.member = member
    }

    /// The member's pipelines follow the host's clock through the net clock: nothing to adopt here.
    func adopt(clock: Clock) async throws {}
    func releaseClock() async {}

    func perform(_ command: DelegatedCommand) async throws {
        try check(await member.request { self.message(command, request: $0) })
    }

    /// "Prepare" and "start at C" leave together: the member prepares, then starts at C (or answers that it
    /// missed it) without waiting a round trip to be told.
    func prepareThenStart(_ prepare: DelegatedCommand, _ start: DelegatedCommand) async throws {
        let (prepared, started) = await member.requests({ self.message(prepare, request: $0) },
                                                         then: { self.message(start, request: $0) })
        try check(prepared)
        try check(started)
    }

    func lastPreparation() async -> Duration? { reportedPreparation.withLock { $0 } }

    private func message(_ command: DelegatedCommand, request: Int) -> GroupMessage {
        let originator = command.originator?.rawValue
        let item = command.expectedItemIdentifier
        switch command.kind {
        case .buffer(let time, let rate):
            return .prepare(.init(request: request, participant: participant, item: item,
                                  itemTimeNs: time.nanoseconds, rate: rate, originator: originator))
        case .play(let time, let rate, let at):
            return .start(.init(request: request, participant: participant, item: item, itemTimeNs: time.nanoseconds,
                                rate: rate, atClockNs: at.nanoseconds, originator: originator))
        case .pause(let time):
            return .pause(.init(request: request, participant: participant, item: item,
                                itemTimeNs: time.nanoseconds, originator: originator))
        }
    }

    /// The answer as the command's result; a prepare's answer also updates the reported preparation.
    private func check(_ reply: GroupMessage.Reply) throws {
        if let prepared = reply.preparedNs {
            reportedPreparation.withLock { $0 = .nanoseconds(Int64(prepared)) }
        }
        switch reply.outcome {
        case .ok: return
        case .missedStart: throw CoordinationError.missedStartInstant
        case .failed(let why): throw RemoteViewError.failed(participant: participant, why)
        }
    }

    /// The member's position is not polled: the group (which exists before any member joins) is the reference.
    func currentItemTime() async -> ClockTime? { nil }
    func isPlaying() async -> Bool { false }
    /// The member's own player shows "waiting" while it prepares.
    func setWaiting(_ waiting: Bool) async {}
    func setDetached(_ detached: Bool) async {}
}
