import Foundation
import GStreamer

/// The playback object behind a coordinator: our `Player`, or anything else through a delegate.
public protocol CoordinatedPlaybackTarget: AnyObject, Sendable {
    /// Run on the medium's clock from now on; throw `CoordinationError.clockRejected` when impossible.
    func adopt(clock: Clock) async throws
    /// Stop using it (disconnect).
    func releaseClock() async
    /// Carry out a command (buffer = seek+preroll and return when ready; play at a clock time; pause).
    func perform(_ command: DelegatedCommand) async throws
    /// The media time shown now.
    func currentItemTime() async -> ClockTime?
    func isPlaying() async -> Bool
    /// Show or clear "waiting to play — waiting for coordinated playback".
    func setWaiting(_ waiting: Bool) async
    /// The participant is detached from the group (suspended): local commands must keep normal timing.
    func setDetached(_ detached: Bool) async
    /// Carries out a buffer command like `perform`, and hands the start it prepared to `whenReady` the moment it
    /// is ready, on whatever thread it is on (see `PreparedStart`): the last participant's call can start the
    /// whole group. Call `whenReady` once when ready (nil: no prepared start); not at all when failing. The
    /// default performs and calls it with nil.
    func prepare(_ command: DelegatedCommand, whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws
    /// A predicted start (`StartPrediction`): carries out `prepare` (a buffer command), then `start` (play at C)
    /// without waiting to be told in between — a remote target sends both at once. Throws `missedStartInstant`
    /// when it was ready only after C. How long preparing took is `lastPreparation`'s to say (nil: the medium's own
    /// measure of the whole call stands for it, which is right for a local target: starting does not wait for C).
    /// The default performs one, then the other.
    func prepareThenStart(_ prepare: DelegatedCommand, _ start: DelegatedCommand) async throws
    /// How long its last preparation took where it ran, when the target knows better than the medium's own
    /// measure (a remote view: the member's figure, without the network). The default: nil.
    func lastPreparation() async -> Duration?
}

extension CoordinatedPlaybackTarget {
    public func prepare(_ command: DelegatedCommand,
                        whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws {
        try await perform(command)
        whenReady(nil)
    }

    public func prepareThenStart(_ prepare: DelegatedCommand, _ start: DelegatedCommand) async throws {
        try await perform(prepare)
        try await perform(start)
    }

    public func lastPreparation() async -> Duration? { nil }
}

/// A participant's start, prepared so that the medium can run it directly: all participants are started in one
/// synchronous loop, instead of one actor hop (or several) per participant before the instant.
public protocol PreparedStart: AnyObject, Sendable {
    /// Starts output so that the prepared media time is rendered at `clockTime`. Synchronous and short; true
    /// when started for this instant (also by an earlier call), false when the instant has passed or the
    /// participant has moved on (the medium then sends "play at" as usual and catches it up).
    func start(at clockTime: ClockTime) -> Bool
}

/// Supplies a custom item identifier (for a local copy of the same content, a composition without a URL, or
/// several camera angles of one event that must share one timeline).
public protocol PlaybackCoordinatorIdentityDelegate: AnyObject, Sendable {
    func itemIdentifier(for coordinator: PlaybackCoordinator, defaultIdentifier: String) -> String
}

/// A suspension: one participant detached from its group for a reason, since a date. End it with `end()`
/// (rejoin at the group's current time and rate) or `end(proposingNewTime:)` (rejoin and move the group).
public final class CoordinatedPlaybackSuspension: Sendable, Hashable, CustomStringConvertible {
    public let reason: SuspensionReason
    public let beginDate: Date
    private let coordinator: PlaybackCoordinator

    init(reason: SuspensionReason, coordinator: PlaybackCoordinator) {
        self.reason = reason
        self.beginDate = Date()
        self.coordinator = coordinator
    }

    /// Rejoins the group at its current time and rate.
    public func end() async throws { try await coordinator.endSuspension(self, proposingNewTime: nil) }

    /// Rejoins and moves the whole group to `time` (how scrubbing shares its result on release).
    public func end(proposingNewTime time: ClockTime) async throws {
        try await coordinator.endSuspension(self, proposingNewTime: time)
    }

    public static func == (a: CoordinatedPlaybackSuspension, b: CoordinatedPlaybackSuspension) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "\(reason) since \(beginDate)" }
}

/// One participant of a coordinated group (AVPlaybackCoordinator). Every transport command given to it goes
/// to the whole group through the medium; the group's commands come back to it as `DelegatedCommand`s.
///
/// Threading: an actor; it owns its suspensions, its event subscribers and its connection.
public actor PlaybackCoordinator {
    public nonisolated let id: ParticipantID
    /// Weak: whoever owns the playback object owns its coordinator, not the other way round.
    private weak var target: CoordinatedPlaybackTarget?
    private let defaultIdentifier: String
    private weak var identityDelegate: PlaybackCoordinatorIdentityDelegate?
    private var medium: (any CoordinationMedium)?
    private var suspensions: [CoordinatedPlaybackSuspension] = []
    private var subscribers: [Int: AsyncStream<CoordinatorEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var lastParticipants: [ParticipantInfo] = []
    /// Reasons for which *this* participant waits when another participant is suspended for them.
    public private(set) var suspensionReasonsThatTriggerWaiting: Set<SuspensionReason> = []
    /// The commands this coordinator's playback object received, newest last (diagnostics, tests, UI).
    public private(set) var commandLog: [DelegatedCommand] = []

    /// `defaultIdentifier` is normally the item's normalised URI.
    /// `target` may be nil and attached later (`attach(target:)`) when the playback object owns its coordinator.
    public init(id: ParticipantID, defaultIdentifier: String, target: CoordinatedPlaybackTarget?,
                identityDelegate: PlaybackCoordinatorIdentityDelegate? = nil) {
        self.id = id
        self.target = target
        self.defaultIdentifier = defaultIdentifier
        self.identityDelegate = identityDelegate
    }

    /// The identifier of the item this participant plays: the delegate's, else the default (the URI).
    public var itemIdentifier: String {
        identityDelegate?.itemIdentifier(for: self, defaultIdentifier: defaultIdentifier) ?? defaultIdentifier
    }

    public func setSuspensionReasonsThatTriggerWaiting(_ reasons: Set<SuspensionReason>) {
        suspensionReasonsThatTriggerWaiting = reasons
    }

    // MARK: Connection

    /// Connects to a medium: the playback object moves to the medium's clock and joins its item's group
    /// (adopting the group's time and rate if the group exists, else making its own state the group state).
    public func coordinate(using medium: any CoordinationMedium) async throws {
        if let current = self.medium {
            throw CoordinationError.alreadyConnected(to: current.name)
        }
        guard let target else { throw CoordinationError.notConnected }
        try await target.adopt(clock: medium.clock)
        do {
            try await medium.connect(self)
        } catch {
            await target.releaseClock()
            throw error
        }
        self.medium = medium
    }

    /// Joins the group's timeline now (call once the media is loaded). A late joiner appears aligned.
    public func join() async throws {
        guard let medium else { throw CoordinationError.notConnected }
        try await medium.rejoin(id)
    }

    public func disconnect() async {
        guard let medium else { return }
        self.medium = nil
        await medium.disconnect(id)
        await target?.releaseClock()
    }

    public var isConnected: Bool { medium != nil }

    /// Sets the playback object (used when it is created after the coordinator).
    public func attach(target: CoordinatedPlaybackTarget) { self.target = target }

    // MARK: Transport (intercepted commands go to the group)

    /// Any transport command from this participant's UI: to the group, or — while suspended — to this view alone
    /// (returns false then, so the caller performs it locally).
    public func coordinate(_ intent: GroupIntent) async throws -> Bool {
        guard let medium else { throw CoordinationError.notConnected }
        guard suspensions.isEmpty else { return false }
        try await medium.propose(intent, item: itemIdentifier, from: id)
        return true
    }

    public func coordinatePlay(rate: Double = 1.0) async throws { _ = try await coordinate(.play(rate: rate)) }
    public func coordinatePause() async throws { _ = try await coordinate(.pause) }
    public func coordinateSeek(to time: ClockTime) async throws { _ = try await coordinate(.seek(to: time)) }
    public func coordinateRate(_ rate: Double) async throws { _ = try await coordinate(.rate(rate)) }

    /// Starts now at `rate` without waiting for the others (AVPlayer.playImmediately(atRate:)).
    public func playImmediately(atRate rate: Double = 1.0) async throws { _ = try await coordinate(.playImmediately(rate: rate)) }

    // MARK: Suspensions

    /// Detaches this participant: its commands stay local and the group's do not reach it.
    public func beginSuspension(for reason: SuspensionReason) async -> CoordinatedPlaybackSuspension {
        let suspension = CoordinatedPlaybackSuspension(reason: reason, coordinator: self)
        suspensions.append(suspension)
        await target?.setWaiting(false)
        await target?.setDetached(true)
        publish(.suspensionBegan(reason))
        await medium?.suspensionsChanged(id, reasons: suspensionReasons)
        return suspension
    }

    public var suspensionReasons: [SuspensionReason] { suspensions.map(\.reason) }
    public var activeSuspensions: [CoordinatedPlaybackSuspension] { suspensions }

    func endSuspension(_ suspension: CoordinatedPlaybackSuspension, proposingNewTime time: ClockTime?) async throws {
        guard let index = suspensions.firstIndex(where: { $0 === suspension }) else { return }
        suspensions.remove(at: index)
        publish(.suspensionEnded(suspension.reason))
        guard let medium else { return }
        await medium.suspensionsChanged(id, reasons: suspensionReasons)
        guard suspensions.isEmpty else { return }
        if let time {
            try await medium.propose(.seek(to: time), item: itemIdentifier, from: id)
        } else {
            try await medium.rejoin(id)
        }
    }

    /// Ends the first active suspension for `reason`, if any (automatic suspensions end this way).
    public func endSuspension(for reason: SuspensionReason) async throws {
        if let s = suspensions.first(where: { $0.reason == reason }) { try await s.end() }
    }

    // MARK: Group → participant

    /// The other participants with their readiness and suspension reasons.
    public var otherParticipants: [ParticipantInfo] { lastParticipants.filter { $0.id != id } }

    /// A command from the group for this participant's playback object (ignored while suspended, and when it
    /// is about another item).
    func perform(_ command: DelegatedCommand) async throws {
        guard let target = try accept(command) else { return }
        try await target.perform(command)
    }

    /// A buffer command from the group; `whenReady` gets the start the target prepared (nil when it has none, or
    /// at once when the command is ignored: suspended, another item).
    func prepare(_ command: DelegatedCommand, whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws {
        guard let target = try accept(command) else { return whenReady(nil) }
        try await target.prepare(command, whenReady: whenReady)
    }

    /// A predicted start's two commands (`CoordinatedPlaybackTarget.prepareThenStart`); ignored when suspended or
    /// on another item.
    func prepareThenStart(_ prepare: DelegatedCommand, _ start: DelegatedCommand) async throws {
        guard let target = try accept(prepare), try accept(start) != nil else { return }
        try await target.prepareThenStart(prepare, start)
    }

    /// The target's own measure of its last preparation (`CoordinatedPlaybackTarget.lastPreparation`).
    func targetPreparation() async -> Duration? { await target?.lastPreparation() }

    /// The target a group command goes to, logged; nil when it is ignored (suspended, another item).
    private func accept(_ command: DelegatedCommand) throws -> CoordinatedPlaybackTarget? {
        guard suspensions.isEmpty else { return nil }
        guard command.expectedItemIdentifier == itemIdentifier else { return nil }
        commandLog.append(command)
        if commandLog.count > 500 { commandLog.removeFirst(commandLog.count - 500) }
        guard let target else { throw CoordinationError.notConnected }
        return target
    }

    func deliver(_ event: CoordinatorEvent) {
        if case .participantsChanged(let list) = event { lastParticipants = list }
        publish(event)
    }

    func localItemTime() async -> ClockTime? { await target?.currentItemTime() }
    func isLocallyPlaying() async -> Bool { await target?.isPlaying() ?? false }

    // MARK: Events

    public func events() -> AsyncStream<CoordinatorEvent> {
        let (stream, continuation) = AsyncStream<CoordinatorEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = nextSubscriber
        nextSubscriber += 1
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(key) } }
        return stream
    }
    private func unsubscribe(_ key: Int) { subscribers[key] = nil }
    private func publish(_ event: CoordinatorEvent) { for (_, c) in subscribers { c.yield(event) } }
}
