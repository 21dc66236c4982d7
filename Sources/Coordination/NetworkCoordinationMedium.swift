import Foundation
import GStreamer

/// What a `NetworkCoordinationMedium` sends to the session host (the `GroupSession` link implements it over the
/// control channel). Every call is about one of this process's participants, by its local id.
public protocol GroupUplink: Sendable {
    func join(_ id: ParticipantID, item: String) async throws
    func leave(_ id: ParticipantID) async
    func propose(_ intent: GroupIntent, item: String, from id: ParticipantID) async throws
    func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async
    func rejoin(_ id: ParticipantID) async throws
}

/// A group member's medium: its participants' commands, suspensions and rejoins go to the host, whose
/// in-process `PlaybackCoordinationMedium` decides for the whole group (the same planners, the same barrier);
/// the host's commands for a participant (prepare, start at C, pause) and its events come back through the
/// `host…` methods and are carried out here exactly as the in-process medium would.
///
/// The clock: every connected pipeline runs on `clock`, the net client clock following the host's clock (or the
/// system clock itself when host and member share one machine's monotonic clock), so a start instant C chosen on
/// the host is the same instant here.
///
/// Threading: an actor; it owns the local coordinators, their items, the last group states and participants
/// it heard of.
public actor NetworkCoordinationMedium: CoordinationMedium {
    public nonisolated let name: String
    public nonisolated let clock: Clock
    private let uplink: any GroupUplink
    private var coordinators: [ParticipantID: PlaybackCoordinator] = [:]
    private var items: [ParticipantID: String] = [:]
    private var groups: [String: GroupState] = [:]
    private var lastParticipants: [ParticipantInfo] = []

    public init(name: String, clock: Clock, uplink: any GroupUplink) {
        self.name = name
        self.clock = clock
        self.uplink = uplink
    }

    // MARK: CoordinationMedium (participant → host)

    public func connect(_ participant: PlaybackCoordinator) async throws {
        let id = participant.id
        guard coordinators[id] == nil else { throw CoordinationError.duplicateParticipant(id) }
        let item = await participant.itemIdentifier
        coordinators[id] = participant
        items[id] = item
        do {
            try await uplink.join(id, item: item)
        } catch {
            coordinators[id] = nil
            items[id] = nil
            throw error
        }
    }

    public func disconnect(_ id: ParticipantID) async {
        guard coordinators.removeValue(forKey: id) != nil else { return }
        items[id] = nil
        await uplink.leave(id)
    }

    public func propose(_ intent: GroupIntent, item: String, from id: ParticipantID) async throws {
        guard coordinators[id] != nil else { throw CoordinationError.notConnected }
        try await uplink.propose(intent, item: item, from: id)
    }

    public func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async {
        guard coordinators[id] != nil else { return }
        await uplink.suspensionsChanged(id, reasons: reasons)
    }

    public func rejoin(_ id: ParticipantID) async throws {
        guard coordinators[id] != nil else { throw CoordinationError.notConnected }
        try await uplink.rejoin(id)
    }

    public func groupState(for item: String) -> GroupState? { groups[item] }
    public func participants() -> [ParticipantInfo] { lastParticipants }
    public var connectedParticipants: [ParticipantID] { coordinators.keys.sorted() }

    // MARK: Host → participant

    /// A group command from the host for one local participant: prepare (seek + preroll; returns when ready),
    /// start at C on the shared clock (throws `missedStartInstant` when C has passed), or pause.
    public func hostCommand(_ command: DelegatedCommand, for id: ParticipantID) async throws {
        guard let coordinator = coordinators[id] else { throw CoordinationError.notConnected }
        let item = command.expectedItemIdentifier
        switch command.kind {
        case .buffer(let time, let rate):
            groups[item] = GroupState(itemIdentifier: item, rate: rate, isPlaying: false, anchorMedia: time, anchorClock: nil)
            // The player keeps the start it prepared and runs it itself when "start at C" comes.
            try await coordinator.prepare(command) { _ in }
        case .play(let time, let rate, let at):
            groups[item] = GroupState(itemIdentifier: item, rate: rate, isPlaying: true, anchorMedia: time, anchorClock: at)
            try await coordinator.perform(command)
        case .pause(let time):
            let rate = groups[item]?.rate ?? 1
            groups[item] = GroupState(itemIdentifier: item, rate: rate, isPlaying: false, anchorMedia: time, anchorClock: nil)
            try await coordinator.perform(command)
        }
    }

    /// What the group did (rate changed, time jumped — with the originator —, joined), for one local participant.
    public func hostEvent(_ event: CoordinatorEvent, for id: ParticipantID) async {
        if case .joined(let state) = event { groups[state.itemIdentifier] = state }
        await coordinators[id]?.deliver(event)
    }

    /// The session's participants changed (host ids: the host's views and every member's).
    public func hostParticipants(_ list: [ParticipantInfo]) async {
        lastParticipants = list
        for (_, coordinator) in coordinators { await coordinator.deliver(.participantsChanged(list)) }
    }

    /// The group states the host announced on welcome.
    public func hostGroups(_ states: [GroupState]) {
        for state in states { groups[state.itemIdentifier] = state }
    }
}

/// A network medium's link rebuilds what the host sent: the commands and participant lists of the coordination
/// layer, made from their wire form outside this module.
extension DelegatedCommand {
    public static func fromHost(kind: Kind, expectedItemIdentifier: String, originator: ParticipantID?) -> DelegatedCommand {
        DelegatedCommand(kind: kind, expectedItemIdentifier: expectedItemIdentifier, originator: originator)
    }
}

extension ParticipantInfo {
    public static func remote(id: ParticipantID, itemIdentifier: String?, isReady: Bool,
                              suspensionReasons: [SuspensionReason]) -> ParticipantInfo {
        ParticipantInfo(id: id, itemIdentifier: itemIdentifier, isReady: isReady, suspensionReasons: suspensionReasons)
    }
}
