import Foundation
import GStreamer
import Multiview

/// Plugs the coordination layer into a `Stage`: every view gets a `PlayerCoordination` on one medium, all on
/// one item identifier (the views are angles of one event, so they share one timeline).
///
/// Threading: the coordinations live in a `ViewCoordinations` table (a `Mutex`).
public final class CoordinatedStage: PlayerCoordinatedStage, Sendable {
    public let medium: PlaybackCoordinationMedium
    public let itemIdentifier: String
    private let views = ViewCoordinations()

    public init(medium: PlaybackCoordinationMedium = PlaybackCoordinationMedium(), itemIdentifier: String = "multiview-event") {
        self.medium = medium
        self.itemIdentifier = itemIdentifier
    }

    public func coordination(for player: Player) -> PlayerCoordination? { views[player] }

    public func attach(_ player: Player, source: MediaSource) async throws {
        try await views.attach(player, source: source, itemIdentifier: itemIdentifier, medium: medium)
    }

    public func start(_ players: [Player]) async throws {
        guard let first = players.first else { return }
        // A play from any view starts the whole group; the first one is as good as any.
        try await first.play()
    }

    /// "What happened?" (`PlayerCoordination.whatHappened`), waiting on the medium's wait clock and reading the
    /// group's time on its pipelines' clock.
    public func whatHappened(_ player: Player) async throws {
        let medium = self.medium
        try await attachedCoordination(for: player).whatHappened(waitClock: medium.waitClock) { item in
            (await medium.groupState(for: item), medium.pipelineTime.time)
        }
    }
}
