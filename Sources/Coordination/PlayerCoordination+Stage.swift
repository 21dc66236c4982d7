import GStreamer
import Multiview
import Synchronization

/// A stage coordination that gives every view a `PlayerCoordination`: `CoordinatedStage` (in process) and
/// `NetworkCoordinatedStage` (a group session's member). Joining a view, its tag's label and "what happened?" are
/// then the same whatever medium carries the group; the stages differ only in how they read their group's time.
public protocol PlayerCoordinatedStage: StageCoordination {
    /// The view's coordination, nil before the view is attached.
    func coordination(for player: Player) -> PlayerCoordination?
}

extension PlayerCoordinatedStage {
    /// The view's coordination, or `CoordinationError.notConnected` for a view never attached.
    public func attachedCoordination(for player: Player) throws -> PlayerCoordination {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        return coordination
    }

    public func join(_ player: Player) async throws {
        try await attachedCoordination(for: player).coordinator.join()
    }

    public func label(for player: Player) async -> String? {
        await coordination(for: player)?.stageLabel()
    }
}

/// What a stage asks of a coordinated view: its tag's label and "what happened?".
extension PlayerCoordination {
    /// The view's coordination state for its tag: its suspensions, `waiting` while it waits for the group's
    /// start, otherwise the player's state.
    public func stageLabel() async -> String {
        let reasons = await coordinator.suspensionReasons
        if !reasons.isEmpty { return "suspended: " + reasons.map(\.rawValue).joined(separator: ", ") }
        let status = await player.currentStatus
        if status.waitingToPlay == .waitingForCoordinatedPlayback { return "waiting" }
        return status.state == .playing ? "playing" : status.state.description.lowercased()
    }

    /// "What happened?": suspends this view, goes back 5 s, plays at 2× until it has caught up with its group
    /// (or the group no longer plays), then ends the suspension: it rejoins at the group's time and rate. The
    /// other views never pause. Checks every 50 ms for up to 30 s on `waitClock`; at each check `group` reads the
    /// group's state for the item and the time on the pipelines' clock (read anew each time: a member's medium
    /// changes when its host comes back).
    public func whatHappened(waitClock: any _Concurrency.Clock<Duration>,
                             group: @Sendable (_ item: String) async -> (state: GroupState?, now: ClockTime)) async throws {
        let suspension = await coordinator.beginSuspension(for: .whatHappened)
        do {
            let now = await player.position ?? .zero
            try await player.seekLocally(to: ClockTime.seconds(max(0, now.seconds - 5)))
            try await player.setRateLocally(2.0)
            try await player.playLocally()
            let elapsed = stopwatch(on: waitClock)
            while elapsed() < .seconds(30) {
                let (state, pipelineNow) = await group(coordinator.itemIdentifier)
                let groupTime = state?.mediaTime(at: pipelineNow) ?? .zero
                let mine = await player.position ?? .zero
                if mine >= groupTime || state?.isPlaying != true { break }
                try await waitClock.sleep(for: .milliseconds(50))
            }
        } catch {
            try? await suspension.end()
            throw error
        }
        try await suspension.end()
    }
}

/// The coordinations of a stage's views, by view number: what `CoordinatedStage` and `NetworkCoordinatedStage`
/// each keep.
///
/// Threading: the table is owned by a `Mutex`; the coordinations themselves are `Sendable`.
public final class ViewCoordinations: Sendable {
    private let table = Mutex<[Int: PlayerCoordination]>([:])

    public init() {}

    public subscript(player: Player) -> PlayerCoordination? {
        table.withLock { $0[player.view.number] }
    }

    /// Every view's coordination, by view number.
    public var all: [PlayerCoordination] {
        table.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
    }

    /// Gives `player` a coordination on `medium` under `itemIdentifier` (connected: its commands go to the group).
    public func attach(_ player: Player, source: MediaSource, itemIdentifier: String,
                       medium: any CoordinationMedium) async throws {
        let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: itemIdentifier)
        try await coordination.coordinate(using: medium)
        table.withLock { $0[player.view.number] = coordination }
    }
}
