import Foundation
import GStreamer
import Multiview
import Synchronization

/// Coordinates one `Player`: it is the player's transport interceptor (a command from this view goes to the
/// group), the coordinator's playback target (the group's commands drive the pipeline's clock, seek and base
/// time), and the source of automatic suspensions (`stallRecovery` while the view buffers,
/// `audioSessionInterrupted` while PulseAudio corks its stream).
///
/// Threading: immutable references to two actors plus a `Mutex` owning the automatic suspensions; player
/// events are watched by a task that holds this object weakly.
public final class PlayerCoordination: TransportInterceptor, CoordinatedPlaybackTarget, Sendable {
    public let player: Player
    public let coordinator: PlaybackCoordinator
    private let automatic = Mutex<[SuspensionReason: CoordinatedPlaybackSuspension]>([:])
    private let watcher = Mutex<Task<Void, Never>?>(nil)
    /// Ends a stall suspension whose cause is inside the pipeline (`pipelineStallLimit`); one at a time.
    private let pipelineStallWatch = Mutex<Task<Void, Never>?>(nil)

    /// How long a view stays suspended for a stall in which its video starved while its source's buffers stayed
    /// full (`Player.videoStarvedWithSourceBuffered`) before it is caught up anyway. Such a stall does not end by
    /// itself: in the soak, PulseAudio stopped reading the streams of the HLS views after a seek, their demuxers'
    /// output blocked on the full audio branch, and the views stayed BUFFERING 0 % for 10-15 s, until the next
    /// group command's catch-up, whose flushing seek cleared the block. A network stall (buffering below 100 %)
    /// still waits for its buffer to refill.
    public static let pipelineStallLimit: Duration = .seconds(3)

    /// `itemIdentifier` nil: the item is identified by the player's normalised URI (or the delegate's id).
    public init(player: Player, source: MediaSource, itemIdentifier: String? = nil,
                identityDelegate: PlaybackCoordinatorIdentityDelegate? = nil) {
        self.player = player
        let id = ParticipantID("view\(player.view.number)")
        // The target (`self`) is attached in `coordinate(using:)`: it does not exist yet here.
        self.coordinator = PlaybackCoordinator(id: id, defaultIdentifier: itemIdentifier ?? PlayerCoordination.normalize(source.uri),
                                               target: nil, identityDelegate: identityDelegate)
    }

    deinit {
        watcher.withLock { $0?.cancel() }
        pipelineStallWatch.withLock { $0?.cancel() }
    }

    /// The default item identity: the URI with its scheme and host lower-cased and "." / ".." resolved.
    public static func normalize(_ uri: String) -> String {
        guard var components = URLComponents(string: uri) else { return uri }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if let url = components.url { return url.standardized.absoluteString }
        return uri
    }

    /// Connects to `medium` and starts watching the player for automatic suspensions.
    public func coordinate(using medium: any CoordinationMedium) async throws {
        await coordinator.attach(target: self)
        try await coordinator.coordinate(using: medium)
        let events = await player.events()
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.observe(event)
            }
        }
        watcher.withLock { $0 = task }
    }

    private func observe(_ event: PlayerEvent) async {
        switch event {
        case .status(let status):
            if status.state == .buffering, case .buffering = status.waitingToPlay {
                // Only a stall while playing: refilling after a coordinated seek is part of getting ready.
                if await beginAutomatic(.stallRecovery) { watchPipelineStall() }
            } else if status.state == .playing || status.state == .paused, hasAutomatic(.stallRecovery),
                      status.waitingToPlay == nil {
                pipelineStallWatch.withLock { $0?.cancel(); $0 = nil }
                await endAutomatic(.stallRecovery)
            }
        case .interruption(let began):
            if began {
                await beginAutomatic(.audioSessionInterrupted)
            } else {
                await endAutomatic(.audioSessionInterrupted)
                // Still suspended for another reason (the suspension's end caught nothing up): the view goes on
                // locally as it was before its audio sink was replaced (which left it PAUSED). Seen: a member's
                // "what happened?" (local seek, 2×) whose stream was replaced for a wrapped time stayed PAUSED, and
                // its suspension never ended (MemberProcessTests, repeat run 1 on 2f9ec53).
                if await player.takePlayedBeforeAudioReplacement(), !(await coordinator.suspensionReasons).isEmpty {
                    try? await player.playLocally()
                }
            }
        default:
            break
        }
    }

    private func hasAutomatic(_ reason: SuspensionReason) -> Bool { automatic.withLock { $0[reason] != nil } }

    /// Begins the automatic suspension for `reason` unless one is under way; true when it began one.
    @discardableResult
    private func beginAutomatic(_ reason: SuspensionReason) async -> Bool {
        guard !hasAutomatic(reason) else { return false }
        let suspension = await coordinator.beginSuspension(for: reason)
        automatic.withLock { $0[reason] = suspension }
        return true
    }

    /// After `pipelineStallLimit` of a stall suspension: when the view's video is still starved behind a full
    /// source, the suspension ends, and its end catches the view up to the group's time (a flushing seek).
    private func watchPipelineStall() {
        let task = Task { [weak self] in
            try? await Task.sleep(for: PlayerCoordination.pipelineStallLimit)
            guard !Task.isCancelled, let self, self.hasAutomatic(.stallRecovery),
                  await self.player.videoStarvedWithSourceBuffered else { return }
            await self.player.notice("no picture for \(PlayerCoordination.pipelineStallLimit) with its stream buffered " +
                                     "(a stall inside the pipeline): caught up to the group's time")
            await self.endAutomatic(.stallRecovery)
        }
        pipelineStallWatch.withLock { $0?.cancel(); $0 = task }
    }

    private func endAutomatic(_ reason: SuspensionReason) async {
        guard let suspension = automatic.withLock({ $0.removeValue(forKey: reason) }) else { return }
        try? await suspension.end()
    }

    // MARK: TransportInterceptor

    public func intercept(_ command: TransportCommand, player: Player) async throws -> Bool {
        let intent: GroupIntent
        switch command {
        case .play: intent = .play(rate: await player.rate)
        case .pause: intent = .pause
        case .seek(let t): intent = .seek(to: t)
        case .seekBy(let s): intent = .seekBy(seconds: s)
        case .rate(let r): intent = .rate(r)
        case .rejoin:
            // The group still counts a reloaded view as ready (it was, before it failed) and a plain rejoin of a
            // ready participant of a playing group does nothing: a suspension of its own marks it not ready, and
            // its end catches it up to the group's time.
            guard await coordinator.isConnected else { return false }
            let suspension = await coordinator.beginSuspension(for: .reloaded)
            try await suspension.end()
            return true
        }
        guard await coordinator.isConnected else { return false }
        return try await coordinator.coordinate(intent)
    }

    // MARK: CoordinatedPlaybackTarget

    public func adopt(clock: Clock) async throws {
        await player.adoptClock(clock)
        await player.setTransportInterceptor(self)
    }

    public func releaseClock() async {
        await player.setTransportInterceptor(nil)
        await player.releaseClock()
    }

    public func perform(_ command: DelegatedCommand) async throws {
        switch command.kind {
        case .buffer(let time, let rate):
            try await player.prepareCoordinated(at: time, rate: rate)
        case .play(_, _, let clockTime):
            guard try await player.startCoordinated(at: clockTime) else { throw CoordinationError.missedStartInstant }
        case .pause:
            await player.setWaitingForCoordinatedPlayback(false)
        }
    }

    public func prepare(_ command: DelegatedCommand,
                        whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws {
        guard case .buffer(let time, let rate) = command.kind else {
            try await perform(command)
            return whenReady(nil)
        }
        // Called on the player actor at the end of the preparation, before the answer travels back.
        try await player.prepareCoordinated(at: time, rate: rate) { whenReady($0) }
    }

    public func currentItemTime() async -> ClockTime? { await player.position }
    public func isPlaying() async -> Bool { await player.currentStatus.state == .playing }
    public func setWaiting(_ waiting: Bool) async { await player.setWaitingForCoordinatedPlayback(waiting) }
    public func setDetached(_ detached: Bool) async { if detached { await player.useLocalTiming() } }
}

/// The player's prepared start is what the medium runs at the common instant.
extension PreparedSinkStart: PreparedStart {}
