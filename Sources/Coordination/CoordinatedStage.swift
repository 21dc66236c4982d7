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
        await coordination(for: player)?.stageLabel()
    }

    /// "What happened?" (`PlayerCoordination.whatHappened`), waiting on the medium's wait clock and reading the
    /// group's time on its pipelines' clock.
    public func whatHappened(_ player: Player) async throws {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        let medium = self.medium
        try await coordination.whatHappened(waitClock: medium.waitClock) { item in
            (await medium.groupState(for: item), medium.pipelineTime.time)
        }
    }
}
