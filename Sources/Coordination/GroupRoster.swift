import GStreamer

/// The medium's table of participants: which item each plays, its suspensions, readiness and last measured
/// preparation time; and the decisions that only need the table (who takes part in a command, what a rejoin
/// does). A value: the medium owns one (its actor state); a network medium keeps the same table of remote peers.
public struct GroupRoster: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var item: String
        public var suspensions: [SuspensionReason] = []
        /// Prepared for (or playing on) the group's current timeline.
        public var isReady = false
        /// The last measured seek+preroll time (command to ready), to aim late joins.
        public var lastPrepare: Duration = GroupRoster.assumedPrepare
        /// The last seek+preroll as measured where it ran (a remote view: by its member, without the network);
        /// nil until known. A predicted start counts on it (`StartPrediction`). A participant's first barrier is
        /// not kept here: it is its pipeline's first preroll (a host's view that started the group: 316 ms, where
        /// its seeks take 20-40 ms), and a prediction from it put seek → aligned at 430 ms.
        public var ownPrepare: Duration?
        /// It has prepared in a barrier or a catch-up before (its pipeline has prerolled once).
        public var hasPrepared = false
        /// `ownPrepare` was measured by a catch-up (a join, the end of a suspension), not a group command: joins
        /// overstate a seek (`StartPrediction`, "When not to predict").
        public var ownPrepareFromCatchUp = false
        /// The medium left it behind: it was not ready when a barrier stopped waiting (`ReadinessPolicy`). Like a
        /// suspension (`coordinatedPlaybackNotPossible`), it is skipped by the group's commands until it has been
        /// caught up.
        public var leftBehind = false

        public init(item: String) { self.item = item }
    }

    /// A participant prepared: `own` as measured where it ran (what a predicted start counts on, `ownPrepare`) and,
    /// when given, `lastPrepare` as the medium measured it from command to ready (what a catch-up aims with). A
    /// catch-up's own measure is kept as a join's (`ownPrepareFromCatchUp`); a group command's is kept unless it
    /// is the participant's first, its pipeline's first preroll.
    public mutating func notePreparation(_ id: ParticipantID, own: Duration, lastPrepare: Duration?, byCatchUp: Bool) {
        guard var entry = entries[id] else { return }
        if let lastPrepare { entry.lastPrepare = lastPrepare }
        if byCatchUp || entry.hasPrepared {
            entry.ownPrepare = own
            entry.ownPrepareFromCatchUp = byCatchUp
        }
        entry.hasPrepared = true
        entries[id] = entry
    }

    /// What a participant is assumed to need to seek and preroll before it was ever measured.
    public static let assumedPrepare: Duration = .milliseconds(150)

    public private(set) var entries: [ParticipantID: Entry] = [:]

    public init() {}

    public subscript(id: ParticipantID) -> Entry? {
        get { entries[id] }
        set { entries[id] = newValue }
    }

    public mutating func add(_ id: ParticipantID, item: String) throws(CoordinationError) {
        guard entries[id] == nil else { throw .duplicateParticipant(id) }
        entries[id] = Entry(item: item)
    }

    public mutating func remove(_ id: ParticipantID) { entries[id] = nil }

    /// Who takes part in a command for `item`: its participants that are not suspended and not left behind (they
    /// are skipped: the group's commands do not reach them until they rejoin).
    public func eligible(for item: String) -> [ParticipantID] {
        entries.filter { $0.value.item == item && $0.value.suspensions.isEmpty && !$0.value.leftBehind }
            .map(\.key).sorted()
    }

    /// Leaves participants behind (not ready when a barrier stopped waiting for them): not ready, skipped.
    public mutating func leaveBehind(_ ids: [ParticipantID]) {
        for id in ids where entries[id] != nil {
            entries[id]?.leftBehind = true
            entries[id]?.isReady = false
        }
    }

    /// The participant is on its group's timeline again (caught up): it takes part in commands from now on.
    public mutating func caughtUp(_ id: ParticipantID) {
        entries[id]?.leftBehind = false
        entries[id]?.isReady = true
    }

    /// Participants of `item` the medium left behind and that are not suspended on their own (those rejoin when
    /// their suspensions end).
    public func leftBehind(of item: String) -> [ParticipantID] {
        entries.filter { $0.value.item == item && $0.value.leftBehind && $0.value.suspensions.isEmpty }
            .map(\.key).sorted()
    }

    /// Every participant of `item`, suspended or not (they all hear what the group did).
    public func members(of item: String) -> [ParticipantID] {
        entries.filter { $0.value.item == item }.map(\.key).sorted()
    }

    public mutating func setReady(_ ids: [ParticipantID], _ ready: Bool) {
        for id in ids { entries[id]?.isReady = ready }
    }

    /// The participant's suspensions changed: a suspended participant is not ready for the group any more.
    public mutating func setSuspensions(_ id: ParticipantID, _ reasons: [SuspensionReason]) {
        entries[id]?.suspensions = reasons
        if !reasons.isEmpty { entries[id]?.isReady = false }
    }

    /// The participant plays another item now: it is not ready for that item's group.
    public mutating func setItem(_ id: ParticipantID, _ item: String) {
        entries[id]?.item = item
        entries[id]?.isReady = false
    }

    /// Everyone as the others see them, by id; one left behind shows `coordinatedPlaybackNotPossible`.
    public func participants() -> [ParticipantInfo] {
        entries.map { id, entry in
            ParticipantInfo(id: id, itemIdentifier: entry.item, isReady: entry.isReady,
                            suspensionReasons: entry.suspensions + (entry.leftBehind ? [.coordinatedPlaybackNotPossible] : []))
        }.sorted { $0.id < $1.id }
    }

    /// What bringing a participant onto its group's timeline takes.
    public enum RejoinPlan: Sendable, Equatable {
        /// Nothing: it is suspended (it rejoins when its suspensions end), or a barrier that included it has
        /// already started it on the playing group.
        case nothing
        /// No group for its item yet: its own state becomes the group state (one barrier).
        case foundGroup
        /// Put it on the existing group's timeline (`CatchUpPlanner`); also one the medium left behind.
        case catchUp
    }

    public func rejoinPlan(for id: ParticipantID, group: GroupState?) -> RejoinPlan? {
        guard let entry = entries[id] else { return nil }
        guard entry.suspensions.isEmpty else { return .nothing }
        guard let group else { return .foundGroup }
        if entry.isReady, !entry.leftBehind, group.isPlaying { return .nothing }
        return .catchUp
    }
}

/// Holds an item's group paused while participants are suspended for a reason that others wait for
/// (`suspensionReasonsThatTriggerWaiting`), and resumes it at the rate it had when the last of them is back.
/// A value per item, owned by the medium.
public struct WaitingHold: Sendable, Equatable {
    /// The suspended participants holding the group.
    public private(set) var holders: Set<ParticipantID> = []
    /// The rate to resume at; nil when the group was not playing when the hold began.
    public private(set) var resumeRate: Double?

    public init() {}

    public var isHolding: Bool { !holders.isEmpty }

    public enum Decision: Sendable, Equatable {
        case none
        /// Pause the group at `state` (a barrier to a paused state).
        case hold(GroupState)
        /// Play the group again from `state` (a barrier to a playing state).
        case resume(GroupState)
    }

    /// Whether a participant suspended for `reasons` makes the group wait: some other participant of its item waits
    /// for one of them.
    public static func triggersWaiting(_ reasons: [SuspensionReason],
                                       waitedForByOthers others: [Set<SuspensionReason>]) -> Bool {
        others.contains { !$0.isDisjoint(with: reasons) }
    }

    /// A participant's suspensions changed: `triggersWaiting` (see above) for its new reasons; `group` the item's
    /// group state, `now` the pipeline clock's time.
    public mutating func suspensionsChanged(of id: ParticipantID, triggersWaiting: Bool, group: GroupState?,
                                            now: ClockTime) -> Decision {
        if triggersWaiting {
            guard holders.insert(id).inserted, let group, group.isPlaying else { return .none }
            var held = group
            held.anchorMedia = group.mediaTime(at: now)
            held.isPlaying = false
            held.anchorClock = nil
            resumeRate = group.rate
            return .hold(held)
        }
        guard holders.remove(id) != nil, holders.isEmpty, let rate = resumeRate, var resumed = group else {
            return .none
        }
        resumeRate = nil
        resumed.isPlaying = true
        resumed.rate = rate
        return .resume(resumed)
    }

    /// The participant left the medium: it holds nothing any more (the group stays as it is until a command).
    public mutating func remove(_ id: ParticipantID) { holders.remove(id) }
}
