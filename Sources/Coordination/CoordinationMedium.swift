import Foundation
import GStreamer

/// The transport between coordinators. This issue ships `PlaybackCoordinationMedium` (in-process); a network
/// medium (GStreamer net clock across processes and hosts) implements the same protocol.
///
/// A medium owns the clock every connected pipeline runs on, keeps the group state per item, and runs the
/// "everyone ready → start together" barrier for commands from any participant (all participants are peers).
public protocol CoordinationMedium: Actor {
    /// A name for logs and errors.
    nonisolated var name: String { get }
    /// The one clock for all connected pipelines.
    nonisolated var clock: Clock { get }
    func connect(_ participant: PlaybackCoordinator) async throws
    func disconnect(_ id: ParticipantID) async
    /// A transport command from a participant, for its item's group.
    func propose(_ intent: GroupIntent, item: String, from: ParticipantID) async throws
    /// The participant's suspension reasons changed (begun or ended).
    func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async
    /// Brings a participant onto its group's timeline (late join, end of suspension, item change).
    func rejoin(_ id: ParticipantID) async throws
    func groupState(for item: String) async -> GroupState?
    func participants() async -> [ParticipantInfo]
}

/// The in-process coordination medium: participants are coordinators in this process; the clock is GStreamer's
/// system clock (monotonic), shared by every connected pipeline.
///
/// Threading: an actor; it owns the participant table, the group states and the command generations.
/// Commands from any participant are serialised here; the newest command for an item wins (an older one
/// still preparing is abandoned before its start instant).
public actor PlaybackCoordinationMedium: CoordinationMedium {
    public nonisolated let name: String
    public nonisolated let clock: Clock
    /// How far in the future a coordinated start is placed once everyone is ready, at least: enough to run
    /// every participant's prepared start (its sinks, ~0.02-0.1 ms each) before the instant. When a participant
    /// misses an instant anyway (a loaded machine), `extraStartMargin` grows (see `runBarrier`). Sized for the
    /// audio sinks, which place their first samples more precisely with a little more lead (see `runBarrier`).
    public var startMargin: Duration = .milliseconds(2)
    /// How long a participant may take to get ready before the group starts without it.
    public var readyTimeout: Duration = .seconds(10)

    private struct Member {
        var coordinator: PlaybackCoordinator
        var item: String
        var suspensions: [SuspensionReason] = []
        var isReady = false
        /// Last measured seek+preroll time, to aim late joins.
        var lastPrepare: Duration = .milliseconds(150)
    }
    private var members: [ParticipantID: Member] = [:]
    private var groups: [String: GroupState] = [:]
    private var generations: [String: Int] = [:]
    /// The barrier of each item's command being prepared (see `StartBarrier`).
    private var startBarriers: [String: StartBarrier] = [:]
    /// Items whose group is held because a participant is suspended for a reason others wait for.
    private var waitingFor: [String: Set<ParticipantID>] = [:]

    public init(name: String = "in-process") {
        self.name = name
        self.clock = Clock.systemClock()
    }

    public func setStartMargin(_ margin: Duration) { startMargin = margin }

    /// Where the time of the last barrier went: the slowest participant's own seek+preroll (command to ready,
    /// measured inside the group, under the group's load) and the start margin added after it. sync-report
    /// prints these next to "time to aligned".
    public struct BarrierTiming: Sendable, Equatable {
        public var generation: Int
        public var slowestPrepare: Duration
        public var startMargin: Duration
        /// How long before the instant every prepared start had been run (nil when none was prepared).
        public var startLead: Duration?
        /// The last participant to be ready started the group itself (`StartBarrier`), not the medium.
        public var startedByLastReady = false
        /// How long handing "play at C" to every ready participant took (nil until it is done).
        public var startFanout: Duration?
        /// Participants that got "play at C" too late and were caught up instead.
        public var missedStart = 0
    }
    public private(set) var lastBarrierTiming: BarrierTiming?

    // MARK: Membership

    public func connect(_ participant: PlaybackCoordinator) async throws {
        let id = participant.id
        guard members[id] == nil else { throw CoordinationError.duplicateParticipant(id) }
        let item = await participant.itemIdentifier
        members[id] = Member(coordinator: participant, item: item)
        await broadcastParticipants()
    }

    public func disconnect(_ id: ParticipantID) async {
        members[id] = nil
        for item in waitingFor.keys { waitingFor[item]?.remove(id) }
        await broadcastParticipants()
    }

    /// The item a participant plays changed (a delegate's identifier, or a new URI).
    public func itemChanged(_ id: ParticipantID, to item: String) async throws {
        guard members[id] != nil else { return }
        members[id]?.item = item
        members[id]?.isReady = false
        try await rejoin(id)
    }

    public func groupState(for item: String) -> GroupState? { groups[item] }

    public func participants() -> [ParticipantInfo] {
        members.map { id, m in
            ParticipantInfo(id: id, itemIdentifier: m.item, isReady: m.isReady, suspensionReasons: m.suspensions)
        }.sorted { $0.id < $1.id }
    }

    private func broadcastParticipants() async {
        let list = participants()
        for (_, member) in members { await member.coordinator.deliver(.participantsChanged(list)) }
    }

    // MARK: Commands (the barrier)

    public func propose(_ intent: GroupIntent, item: String, from originator: ParticipantID) async throws {
        guard let proposer = members[originator] else { throw CoordinationError.notConnected }
        guard proposer.item == item else { return }
        let now = clock.time
        let current: GroupState
        if let existing = groups[item] {
            current = existing
        } else {
            // No group yet: the proposer's own position is where the group starts.
            let local = await proposer.coordinator.localItemTime() ?? .zero
            current = GroupState(itemIdentifier: item, rate: 1.0, isPlaying: false, anchorMedia: local, anchorClock: nil)
        }
        var target = current
        let here = current.mediaTime(at: now)
        target.anchorMedia = here
        target.anchorClock = nil
        var jumped = false
        var immediate = false
        switch intent {
        case .play(let rate):
            target.isPlaying = true
            target.rate = rate
        case .pause:
            target.isPlaying = false
        case .seek(let time):
            target.anchorMedia = time
            jumped = true
        case .seekBy(let seconds):
            target.anchorMedia = ClockTime.seconds(max(0, here.seconds + seconds))
            jumped = true
        case .rate(let rate):
            target.rate = rate
            target.isPlaying = true
        case .playImmediately(let rate):
            target.isPlaying = true
            target.rate = rate
            immediate = true
        }
        if let holders = waitingFor[item], !holders.isEmpty { target.isPlaying = false }
        let rateChanged = target.rate != current.rate || target.isPlaying != current.isPlaying

        if immediate {
            // The proposer starts right away; the group's anchor is its start; the others catch up like late
            // joiners (they may miss content: that is what "immediately" means).
            let generation = bump(item)
            let result = try await prepareAndStart(originator, state: target, generation: generation)
            if !result { throw CoordinationError.superseded }
            await announce(item: item, originator: originator, rateChanged: true, jumped: jumped, state: groups[item]!)
            for id in eligible(item) where id != originator {
                try? await catchUp(id, generation: generation)
            }
            return
        }

        try await runBarrier(item: item, target: target, originator: originator)
        await announce(item: item, originator: originator, rateChanged: rateChanged, jumped: jumped,
                       state: groups[item] ?? target)
    }

    /// playImmediately: the proposer prepares and starts as soon as it can; its start becomes the anchor.
    private func prepareAndStart(_ id: ParticipantID, state: GroupState, generation: Int) async throws -> Bool {
        guard let coordinator = members[id]?.coordinator else { return false }
        let item = state.itemIdentifier
        try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: state.anchorMedia, rate: state.rate),
                                                       expectedItemIdentifier: item, originator: id))
        guard generations[item] == generation else { return false }
        var lead = Duration.milliseconds(15)
        for _ in 0..<4 {
            guard generations[item] == generation else { return false }
            var started = state
            let at = clock.time + ClockTime(lead)
            started.anchorClock = at
            groups[item] = started
            members[id]?.isReady = true
            do {
                try await coordinator.perform(DelegatedCommand(
                    kind: .play(itemTime: started.anchorMedia, rate: started.rate, atClockTime: at),
                    expectedItemIdentifier: item, originator: id))
                return true
            } catch CoordinationError.missedStartInstant {
                lead = lead * 3   // a loaded machine: aim further ahead (still prepared, nothing rendered)
            }
        }
        throw CoordinationError.participantNotReady(id, "could not start in time")
    }

    private func bump(_ item: String) -> Int {
        // A barrier still preparing for an older command must not start anyone any more.
        startBarriers.removeValue(forKey: item)?.cancel()
        let next = (generations[item] ?? 0) + 1
        generations[item] = next
        return next
    }

    private func eligible(_ item: String) -> [ParticipantID] {
        members.filter { $0.value.item == item && $0.value.suspensions.isEmpty }.map(\.key).sorted()
    }

    /// Everyone prepares (seek + preroll, shown as "waiting for coordinated playback"); when all are ready,
    /// one start instant a little in the future; every pipeline's base time is set from it.
    private func runBarrier(item: String, target: GroupState, originator: ParticipantID?) async throws {
        let generation = bump(item)
        let ids = eligible(item)
        for id in ids { members[id]?.isReady = false }
        groups[item] = target   // paused-at-target while preparing: late joiners aim at it
        let command = DelegatedCommand(kind: .buffer(itemTime: target.anchorMedia, rate: target.rate),
                                       expectedItemIdentifier: item, originator: originator)
        let timeout = readyTimeout
        // The start instant must leave time to start every participant's sinks first: `startMargin`, plus an
        // extra that doubles whenever someone missed the instant and halves after each start nobody missed, plus
        // a little per participant beyond four. Prepared starts run in one real-time loop: four views are started
        // ~0.2 ms after the instant is chosen, nine ~0.3 ms after (sync-report, 2 cores), so 1 ms would do for
        // video; 2 ms is for the audio: with 1 ms, two views' clicks were heard 1.5-3.6 ms apart in 4 of 18
        // bench-audio runs, with 2 ms at most 1.04 ms in 12 runs (1.88 ms under two CPU-hog loops, 6 runs).
        // Each miss would cost ~150-250 ms of catch-up.
        let crowd = Duration.microseconds(100) * max(0, ids.count - 4)
        let margin = startMargin + extraStartMargin + crowd
        // The last participant to be ready starts the group from its own thread (see `StartBarrier`).
        let barrier = StartBarrier(expecting: ids, clock: clock, margin: margin, fires: target.isPlaying)
        startBarriers[item] = barrier
        typealias Prepared = (id: ParticipantID, took: Duration?, error: String?)
        let results: [Prepared] = await withTaskGroup(of: Prepared.self) { group in
            for id in ids {
                guard let coordinator = members[id]?.coordinator else { continue }
                group.addTask {
                    let started = ContinuousClock.now
                    do {
                        try await withDeadline(timeout) {
                            try await coordinator.prepare(command) { barrier.arrive(id, start: $0) }
                        }
                        return (id, ContinuousClock.now - started, nil)
                    } catch {
                        return (id, nil, "\(error)")
                    }
                }
            }
            var all: [Prepared] = []
            for await r in group { all.append(r) }
            return all
        }
        let (fired, preparedStarts) = barrier.cancel()
        if startBarriers[item] === barrier { startBarriers[item] = nil }
        guard generations[item] == generation else { throw CoordinationError.superseded }
        var ready: [ParticipantID] = []
        for result in results {
            if let took = result.took {
                members[result.id]?.isReady = true
                members[result.id]?.lastPrepare = took
                ready.append(result.id)
            }
        }
        var state = target
        if target.isPlaying {
            // Not fired (someone had no prepared start, or was not ready): the medium runs the prepared starts
            // that did arrive itself, the same way. "Play at C" then still goes to every participant below: it
            // finds its start done and updates the participant's own state; one without a prepared start (a
            // delegate) starts there, or is caught up.
            let direct = ready.sorted().compactMap { preparedStarts[$0] }
            let clock = self.clock
            let fanoutBegan = ContinuousClock.now
            let started = fired ?? StartBarrier.startAll(direct, clock: clock, margin: margin)
            let start = started.start
            let lead = fired == nil && direct.isEmpty ? nil : started.lead
            lastBarrierTiming = BarrierTiming(generation: generation,
                                              slowestPrepare: results.compactMap(\.took).max() ?? .zero,
                                              startMargin: margin, startLead: lead, startedByLastReady: fired != nil)
            state.anchorClock = start
            groups[item] = state
            let play = DelegatedCommand(kind: .play(itemTime: state.anchorMedia, rate: state.rate, atClockTime: start),
                                        expectedItemIdentifier: item, originator: originator)
            let starters = ready.sorted().compactMap { id in members[id].map { (id, $0.coordinator) } }
            // A participant that got "play at C" only after C says so (missedStartInstant) and stays prepared
            // instead of starting late. (Judging by when `perform` returned would also catch participants that did
            // start in time and were merely slow to answer, and re-prepare them for nothing.)
            let late: [ParticipantID] = await withTaskGroup(of: ParticipantID?.self) { group in
                for (id, coordinator) in starters {
                    group.addTask {
                        do {
                            try await coordinator.perform(play)
                            return nil
                        } catch CoordinationError.missedStartInstant {
                            return id
                        } catch {
                            // A target that cannot start is caught up like a late one (it gets prepared again).
                            return clock.time > start ? id : nil
                        }
                    }
                }
                var late: [ParticipantID] = []
                for await id in group { if let id { late.append(id) } }
                return late
            }
            let fanout = ContinuousClock.now - fanoutBegan
            if lastBarrierTiming?.generation == generation {
                lastBarrierTiming?.startFanout = fanout
                lastBarrierTiming?.missedStart = late.count
            }
            extraStartMargin = late.isEmpty
                ? (extraStartMargin < .milliseconds(1) ? .zero : extraStartMargin / 2)
                : min(max(extraStartMargin * 2, startMargin), Self.maximumExtraStartMargin)
            // A participant that missed the instant is put on the group's timeline properly (prepare ahead, start
            // exactly on time).
            for id in late.sorted() where generations[item] == generation {
                try? await catchUp(id, generation: generation)
            }
        } else {
            groups[item] = state
            let pause = DelegatedCommand(kind: .pause(itemTime: state.anchorMedia), expectedItemIdentifier: item,
                                         originator: originator)
            for id in ready.sorted() { try? await members[id]?.coordinator.perform(pause) }
        }
        await broadcastParticipants()
        if let failed = results.first(where: { $0.took == nil }) {
            throw CoordinationError.participantNotReady(failed.id, failed.error ?? "unknown")
        }
    }

    private func announce(item: String, originator: ParticipantID?, rateChanged: Bool, jumped: Bool,
                          state: GroupState) async {
        for (id, member) in members where member.item == item {
            let other = originator != nil && originator != id
            if rateChanged {
                await member.coordinator.deliver(.rateChanged(rate: state.isPlaying ? state.rate : 0,
                                                              originator: originator, byOtherParticipant: other))
            }
            if jumped {
                await member.coordinator.deliver(.timeJumped(to: state.anchorMedia, originator: originator,
                                                             byOtherParticipant: other))
            }
        }
    }

    // MARK: Late join, rejoin after suspension

    public func rejoin(_ id: ParticipantID) async throws {
        guard let member = members[id] else { throw CoordinationError.notConnected }
        guard member.suspensions.isEmpty else { return }
        // Already started by a barrier that included it (e.g. the group resumed when its suspension ended).
        if member.isReady, groups[member.item]?.isPlaying == true { return }
        if groups[member.item] == nil {
            // No group state for this item yet: this participant's state becomes the group state.
            let here = await member.coordinator.localItemTime() ?? .zero
            let playing = await member.coordinator.isLocallyPlaying()
            let state = GroupState(itemIdentifier: member.item, rate: 1.0, isPlaying: playing, anchorMedia: here,
                                   anchorClock: nil)
            try await runBarrier(item: member.item, target: state, originator: id)
            return
        }
        try await catchUp(id, generation: generations[member.item] ?? 0)
    }

    /// Puts one participant on the group's running timeline: it prepares at the media time the group will be at
    /// when it is ready, then starts exactly when the group reaches that time. If preparing took longer than
    /// aimed for, it aims again further ahead.
    private func catchUp(_ id: ParticipantID, generation: Int) async throws {
        guard let member = members[id], let group = groups[member.item] else { return }
        let coordinator = member.coordinator
        members[id]?.isReady = false
        if !group.isPlaying || group.anchorClock == nil {
            try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: group.anchorMedia, rate: group.rate),
                                                           expectedItemIdentifier: group.itemIdentifier, originator: nil))
            try await coordinator.perform(DelegatedCommand(kind: .pause(itemTime: group.anchorMedia),
                                                           expectedItemIdentifier: group.itemIdentifier, originator: nil))
            members[id]?.isReady = true
            await coordinator.deliver(.joined(group))
            await broadcastParticipants()
            return
        }
        var lead = member.lastPrepare * 2 + .milliseconds(80)
        for _ in 0..<6 {
            guard let current = groups[member.item], current.isPlaying else { return }
            let aim = clock.time + ClockTime(lead)
            let media = current.mediaTime(at: aim)
            let started = ContinuousClock.now
            try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: media, rate: current.rate),
                                                           expectedItemIdentifier: current.itemIdentifier, originator: nil))
            members[id]?.lastPrepare = ContinuousClock.now - started
            // The group may have moved (a command) while we prepared: aim again at the new timeline.
            guard let now = groups[member.item], now == current, let startAt = now.clockTime(forMedia: media) else { continue }
            if startAt > clock.time + .milliseconds(5) {
                do {
                    try await coordinator.perform(DelegatedCommand(
                        kind: .play(itemTime: media, rate: now.rate, atClockTime: startAt),
                        expectedItemIdentifier: now.itemIdentifier, originator: nil))
                } catch CoordinationError.missedStartInstant {
                    lead = lead * 2
                    continue
                }
                members[id]?.isReady = true
                await coordinator.deliver(.joined(now))
                await broadcastParticipants()
                return
            }
            lead = lead * 2
        }
        throw CoordinationError.participantNotReady(id, "could not catch up with the group")
    }

    // MARK: Suspensions

    public func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async {
        guard let member = members[id] else { return }
        let before = member.suspensions
        members[id]?.suspensions = reasons
        members[id]?.isReady = reasons.isEmpty ? member.isReady : false
        let item = member.item
        // Does any other participant wait for one of these reasons?
        var triggersWaiting = false
        for (other, m) in members where other != id && m.item == item {
            let waitsFor = await m.coordinator.suspensionReasonsThatTriggerWaiting
            if !waitsFor.isDisjoint(with: reasons) { triggersWaiting = true }
        }
        if triggersWaiting && !(waitingFor[item]?.contains(id) ?? false) {
            waitingFor[item, default: []].insert(id)
            if let group = groups[item], group.isPlaying {
                var held = group
                held.anchorMedia = group.mediaTime(at: clock.time)
                held.isPlaying = false
                held.anchorClock = nil
                try? await runBarrier(item: item, target: held, originator: nil)
                resumeAfterWaiting[item] = group.rate
            }
        } else if !triggersWaiting, waitingFor[item]?.remove(id) != nil, waitingFor[item]?.isEmpty ?? true,
                  let rate = resumeAfterWaiting.removeValue(forKey: item), var group = groups[item] {
            group.isPlaying = true
            group.rate = rate
            try? await runBarrier(item: item, target: group, originator: nil)
        }
        if before != reasons { await broadcastParticipants() }
    }
    private var resumeAfterWaiting: [String: Double] = [:]
    /// Added to `startMargin` after missed instants (doubling, up to `maximumExtraStartMargin`), halved after
    /// each start that nobody missed.
    private var extraStartMargin: Duration = .zero
    static let maximumExtraStartMargin: Duration = .milliseconds(48)
}

/// Runs `body`, failing with a timeout error when it takes longer than `limit`.
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw CoordinationError.participantNotReady(ParticipantID("?"), "timed out after \(limit)")
        }
        guard let first = try await group.next() else { throw CancellationError() }
        group.cancelAll()
        return first
    }
}
