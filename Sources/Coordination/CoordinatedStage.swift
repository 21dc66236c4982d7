import Foundation
import GStreamer
import Multiview
import Synchronization

/// Plugs the coordination layer into a `Stage`: every view gets a `PlayerCoordination` on one medium, all on
/// one item identifier (the views are angles of one event, so they share one timeline).
///
/// Threading: the coordinations live in a `Mutex`-protected table keyed by view number.
public final class CoordinatedStage: StageCoordination, Sendable {
    public let medium: PlaybackCoordinationMedium
    public let itemIdentifier: String
    private let coordinations = Mutex<[Int: PlayerCoordination]>([:])

    public init(medium: PlaybackCoordinationMedium = PlaybackCoordinationMedium(), itemIdentifier: String = "multiview-event") {
        self.medium = medium
        self.itemIdentifier = itemIdentifier
    }

    public func coordination(for player: Player) -> PlayerCoordination? {
        coordinations.withLock { $0[player.view.number] }
    }

    public func attach(_ player: Player, source: MediaSource) async throws {
        let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: itemIdentifier)
        try await coordination.coordinate(using: medium)
        coordinations.withLock { $0[player.view.number] = coordination }
    }

    public func start(_ players: [Player]) async throws {
        guard let first = players.first else { return }
        // A play from any view starts the whole group; the first one is as good as any.
        try await first.play()
    }

    public func join(_ player: Player) async throws {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        try await coordination.coordinator.join()
    }

    public func label(for player: Player) async -> String? {
        guard let coordination = coordination(for: player) else { return nil }
        let reasons = await coordination.coordinator.suspensionReasons
        if !reasons.isEmpty { return "suspended: " + reasons.map(\.rawValue).joined(separator: ", ") }
        let status = await player.currentStatus
        if status.waitingToPlay == .waitingForCoordinatedPlayback { return "waiting" }
        return status.state == .playing ? "playing" : status.state.description.lowercased()
    }

    /// "What happened?": suspend this view, go back 5 s, play at 2× until it has caught up with the group,
    /// end the suspension (it rejoins at the group's time and rate). The other views never pause.
    public func whatHappened(_ player: Player) async throws {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        let coordinator = coordination.coordinator
        let suspension = await coordinator.beginSuspension(for: .whatHappened)
        do {
            let now = await player.position ?? .zero
            let back = ClockTime.seconds(max(0, now.seconds - 5))
            try await player.seekLocally(to: back)
            try await player.setRateLocally(2.0)
            try await player.playLocally()
            // Checks every 50 ms, for up to 30 s, on the medium's wait clock.
            let elapsed = stopwatch(on: medium.waitClock)
            while elapsed() < .seconds(30) {
                let group = await medium.groupState(for: coordinator.itemIdentifier)
                let groupTime = group?.mediaTime(at: medium.pipelineTime.time) ?? .zero
                let mine = await player.position ?? .zero
                if mine >= groupTime || group?.isPlaying != true { break }
                try await medium.waitClock.sleep(for: .milliseconds(50))
            }
        } catch {
            try? await suspension.end()
            throw error
        }
        try await suspension.end()
    }
}
