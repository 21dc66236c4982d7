import Foundation
import GStreamer

/// The transport between coordinators. This issue ships `PlaybackCoordinationMedium` (in-process); a network
/// medium (GStreamer net clock across processes and hosts) implements the same protocol, with the same planners
/// (`GroupCommandPlanner`, `StartMarginPolicy`, `CatchUpPlanner`, `GroupRoster`, `WaitingHold`) deciding.
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

/// The in-process coordination medium: participants are coordinators in this process; the pipelines' clock is
/// GStreamer's system clock (monotonic), shared by every connected pipeline.
///
/// What it decides, it asks a planner (values in, values out): `GroupCommandPlanner` (command → target state and
/// announcements), `StartMarginPolicy`, `CatchUpPlanner` / `ImmediateStartPlanner`, `GroupRoster` (eligibility,
/// rejoin), `WaitingHold` and `ReadinessPolicy` (how long to wait for readiness; bringing back one left behind).
/// What it does itself is the I/O: asking participants to prepare, start and pause. Its waits and measured spans
/// run on `waitClock`, injected (a `TestClock` in tests); start instants and anchors are on the pipelines' clock,
/// read through `pipelineTime`.
///
/// Threading: an actor; it owns the roster, the coordinators, the group states, the command generations, the
/// barriers being prepared, the holds, the start-margin and readiness policies and the tasks bringing back
/// participants left behind. Commands from any participant are serialised
/// here; the newest command for an item wins (an older one still preparing is abandoned before its instant).
/// The coordinated start itself runs off the actor, on the thread of the last participant to be ready
/// (`StartBarrier`).
public actor PlaybackCoordinationMedium: CoordinationMedium {
    public nonisolated let name: String
    public nonisolated let clock: Clock
    /// The pipelines' clock as the medium reads it: `clock` itself unless a test gave its own time.
    public nonisolated let pipelineTime: any PipelineTimeSource
    /// The clock the medium waits on (ready timeout) and measures spans with (preparation, fan-out).
    public nonisolated let waitClock: any _Concurrency.Clock<Duration>
    /// How a coordinated start's instant is placed after everyone is ready (`StartMarginPolicy`).
    var marginPolicy = StartMarginPolicy()
    /// How long the group waits for participants to get ready, and how it brings back one it left behind.
    public private(set) var readiness = ReadinessPolicy()
    /// The longest a participant may take to get ready before the group starts without it (`readiness.limit`).
    public var readyTimeout: Duration { readiness.limit }
    /// Participants left behind being brought back (CoordinationMedium+Readiness.swift).
    var bringBackTasks: [ParticipantID: Task<Void, Never>] = [:]
    /// The catch-up running for each participant (CoordinationMedium+CatchUp.swift): one at a time.
    var catchUps: [ParticipantID: Task<Bool, any Error>] = [:]
    /// Participants on their way onto the group's timeline: the item's barriers leave them out (their catch-up
    /// joins whatever the barrier made; CoordinationMedium+CatchUp.swift).
    var catchingUp: Set<ParticipantID> = []
    /// The last catch-up aims, oldest first (diagnostics: why a view was slow to rejoin).
    public internal(set) var catchUpAims: [CatchUpAim] = []
    /// How many aims were dropped from the front of `catchUpAims` (numbers them for `settleAim`).
    var catchUpAimsDropped = 0
    static let keptCatchUpAims = 64

    var roster = GroupRoster()
    var coordinators: [ParticipantID: PlaybackCoordinator] = [:]
    var groups: [String: GroupState] = [:]
    var generations: [String: Int] = [:]
    /// The barrier of each item's command being prepared (see `StartBarrier`).
    var startBarriers: [String: StartBarrier] = [:]
    /// Per item: participants suspended for a reason others wait for, holding the group paused.
    var holds: [String: WaitingHold] = [:]
    /// Per item: joiners waiting for the start instant of the barrier being prepared (CoordinationMedium+CatchUp).
    var startWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// `waitClock`: what timeouts wait on; `pipelineTime`: a stand-in for the pipelines' clock's time (tests of
    /// the medium's decisions with fake participants); nil reads `clock`.
    public init(name: String = "in-process", waitClock: any _Concurrency.Clock<Duration> = ContinuousClock(),
                pipelineTime: (any PipelineTimeSource)? = nil) {
        self.name = name
        self.clock = Clock.systemClock()
        self.pipelineTime = pipelineTime ?? clock
        self.waitClock = waitClock
    }

    /// The least margin between "everyone is ready" and the start instant (`StartMarginPolicy.floor`).
    public var startMargin: Duration { marginPolicy.floor }
    public func setStartMargin(_ margin: Duration) { marginPolicy.floor = margin }
    /// Where a playing barrier's instant goes when it is predicted (`runPredictedStart`); nil: after everyone is
    /// ready (`StartMarginPolicy`). A session host sets one while members take part.
    public internal(set) var startPrediction: StartPrediction?
    /// Sets the prediction's delivery and the slowest round trip (nil: no prediction), keeping what recent misses
    /// added to it.
    public func setStartPrediction(delivery: Duration?, roundTrip: Duration = .zero) {
        guard let delivery else { startPrediction = nil; return }
        startPrediction = startPrediction?.with(delivery: delivery, roundTrip: roundTrip)
            ?? StartPrediction(delivery: delivery, roundTrip: roundTrip)
    }
    public func setReadyTimeout(_ timeout: Duration) { readiness.limit = timeout }
    public func setReadinessPolicy(_ policy: ReadinessPolicy) { readiness = policy }

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
        /// The instant was predicted (`StartPrediction`): `startMargin` is then the whole lead from the command,
        /// `slowestPrepare` the slowest participant's own measure.
        public var predicted = false
    }
    public internal(set) var lastBarrierTiming: BarrierTiming?

    // MARK: Membership

    public func connect(_ participant: PlaybackCoordinator) async throws {
        let id = participant.id
        guard roster[id] == nil else { throw CoordinationError.duplicateParticipant(id) }
        let item = await participant.itemIdentifier
        try roster.add(id, item: item)
        coordinators[id] = participant
        await broadcastParticipants()
    }

    public func disconnect(_ id: ParticipantID) async {
        roster.remove(id)
        coordinators[id] = nil
        bringBackTasks.removeValue(forKey: id)?.cancel()
        for item in holds.keys { holds[item]?.remove(id) }
        await broadcastParticipants()
    }

    /// The item a participant plays changed (a delegate's identifier, or a new URI).
    public func itemChanged(_ id: ParticipantID, to item: String) async throws {
        guard roster[id] != nil else { return }
        roster.setItem(id, item)
        try await rejoin(id)
    }

    public func groupState(for item: String) -> GroupState? { groups[item] }

    public func participants() -> [ParticipantInfo] { roster.participants() }

    func broadcastParticipants() async {
        let list = roster.participants()
        for (_, coordinator) in coordinators { await coordinator.deliver(.participantsChanged(list)) }
    }

    // MARK: Commands

    public func propose(_ intent: GroupIntent, item: String, from originator: ParticipantID) async throws {
        guard let proposer = roster[originator], let coordinator = coordinators[originator] else {
            throw CoordinationError.notConnected
        }
        guard proposer.item == item else { return }
        // No group yet: the proposer's own position is where the group starts.
        let position = groups[item] == nil ? await coordinator.localItemTime() : nil
        let current = GroupCommandPlanner.currentState(existing: groups[item], item: item, proposerPosition: position)
        let plan = GroupCommandPlanner.plan(intent, current: current, now: pipelineTime.time,
                                            held: holds[item]?.isHolding ?? false)
        switch plan.start {
        case .immediate:
            // The proposer starts right away; the group's anchor is its start; the others catch up like late
            // joiners (they may miss content: that is what "immediately" means).
            let generation = bump(item)
            guard try await startImmediately(originator, state: plan.target, generation: generation) else {
                throw CoordinationError.superseded
            }
            await announce(plan, item: item, originator: originator, state: groups[item] ?? plan.target)
            for id in roster.eligible(for: item) where id != originator {
                do { try await catchUp(id) } catch { await leaveBehind([id]) }
            }
        case .barrier:
            try await runBarrier(item: item, target: plan.target, originator: originator)
            await announce(plan, item: item, originator: originator, state: groups[item] ?? plan.target)
        }
    }

    /// A new command for `item`: a barrier still preparing for an older one must not start anyone any more.
    func bump(_ item: String) -> Int {
        startBarriers.removeValue(forKey: item)?.cancel()
        startSettled(item)
        let next = (generations[item] ?? 0) + 1
        generations[item] = next
        return next
    }

    private func announce(_ plan: GroupCommandPlan, item: String, originator: ParticipantID?, state: GroupState) async {
        let told = GroupCommandPlanner.announcements(of: plan, state: state, originator: originator,
                                                     to: roster.members(of: item))
        for (id, events) in told.sorted(by: { $0.key < $1.key }) {
            guard let coordinator = coordinators[id] else { continue }
            for event in events { await coordinator.deliver(event) }
        }
    }

    // MARK: Late join, rejoin after suspension

    public func rejoin(_ id: ParticipantID) async throws {
        // A start being prepared may include this participant (connected before its barrier began): wait for its
        // instant, then see what is left to do (a participant it started has nothing to do).
        if let item = roster[id]?.item { await waitForPendingStart(item) }
        guard let entry = roster[id], let coordinator = coordinators[id],
              let plan = roster.rejoinPlan(for: id, group: groups[entry.item]) else {
            throw CoordinationError.notConnected
        }
        switch plan {
        case .nothing:
            return
        case .foundGroup:
            // No group state for this item yet: this participant's state becomes the group state.
            let here = await coordinator.localItemTime() ?? .zero
            let playing = await coordinator.isLocallyPlaying()
            // A command made the group while this participant was asked where it is (a host's first play while a
            // member joins): founding it now would supersede that command. Join what it made instead.
            guard groups[entry.item] == nil else { return try await rejoin(id) }
            let state = GroupState(itemIdentifier: entry.item, rate: 1.0, isPlaying: playing, anchorMedia: here,
                                   anchorClock: nil)
            do {
                try await runBarrier(item: entry.item, target: state, originator: id)
            } catch CoordinationError.superseded {
                // A command came while the group was being founded: it decides (it asked this participant to
                // prepare too, or it is a start to catch up with); this join is not its failure.
                try await rejoin(id)
            }
        case .catchUp:
            do {
                try await catchUp(id)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                // Not on the group's timeline (it gave up aiming, or a preparation failed): left behind, as a
                // barrier leaves one that is not ready — suspended where the others see it, skipped by commands,
                // and brought back by the retries. Before, the end of a stall whose catch-up gave up was dropped
                // (`try?` at the automatic suspension's end) and the view waited, unsaid, for the next command.
                await leaveBehind([id])
                throw error
            }
        }
    }

    // MARK: Suspensions

    public func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async {
        guard let entry = roster[id] else { return }
        let before = entry.suspensions
        roster.setSuspensions(id, reasons)
        let item = entry.item
        // Does any other participant wait for one of these reasons?
        var waitedFor: [Set<SuspensionReason>] = []
        for other in roster.members(of: item) where other != id {
            guard let coordinator = coordinators[other] else { continue }
            waitedFor.append(await coordinator.suspensionReasonsThatTriggerWaiting)
        }
        let triggers = WaitingHold.triggersWaiting(reasons, waitedForByOthers: waitedFor)
        var hold = holds[item] ?? WaitingHold()
        let decision = hold.suspensionsChanged(of: id, triggersWaiting: triggers, group: groups[item],
                                               now: pipelineTime.time)
        holds[item] = hold
        switch decision {
        case .none:
            break
        case .hold(let state), .resume(let state):
            // A failure here is a participant that was not ready: the barrier has already left it behind, and
            // it rejoins on its own (its suspension ends, or its next command).
            try? await runBarrier(item: item, target: state, originator: nil)
        }
        if before != reasons { await broadcastParticipants() }
    }
}
