import Coordination
import Foundation
import GStreamer
import Multiview
import Synchronization

/// Plugs a member's views into a group session: every view gets a `PlayerCoordination` on the member's
/// `NetworkCoordinationMedium` under the session's item identifier, and *joins* the group (a member adopts the
/// group's state — time, rate, playing — instead of starting it, as a late joiner does in process).
///
/// Threading: the coordinations live in a `ViewCoordinations` table (a `Mutex`); the current medium in a `Mutex`.
public final class NetworkCoordinatedStage: PlayerCoordinatedStage, Sendable {
    public let itemIdentifier: String
    private let views = ViewCoordinations()
    /// The medium of the current link to the host (a returning host means a new one: `move(to:)`).
    private let currentMedium: Mutex<NetworkCoordinationMedium>
    /// Returns once the current link's clock may be played on (settled; see `MemberSession.Link`): every view
    /// waits for it, prerolled, before it joins the group.
    private let clockReady: Mutex<@Sendable () async -> Void>

    public init(medium: NetworkCoordinationMedium, itemIdentifier: String,
                waitUntilClockSettled: @escaping @Sendable () async -> Void = {}) {
        self.currentMedium = Mutex(medium)
        self.clockReady = Mutex(waitUntilClockSettled)
        self.itemIdentifier = itemIdentifier
    }

    public var medium: NetworkCoordinationMedium { currentMedium.withLock { $0 } }

    /// Moves every view to `medium` (a host that came back: a new link, a new net clock) and joins its group:
    /// every view leaves the old medium (its pipeline gives the old clock back); then `betweenLinks` runs — what
    /// the old link held ends there (its clock guard's suspensions: a view without a medium just drops one, where
    /// through a medium ending it would rejoin); then each view adopts the new clock and, once it has settled,
    /// catches up with the group like a late joiner. No view may still be suspended when it joins: a suspended
    /// view ignores the group's commands, so its catch-up would be answered — and reported as joined — while it
    /// played on by itself.
    public func move(to medium: NetworkCoordinationMedium, betweenLinks: @Sendable () async -> Void = {},
                     waitUntilClockSettled: @escaping @Sendable () async -> Void = {}) async throws {
        currentMedium.withLock { $0 = medium }
        clockReady.withLock { $0 = waitUntilClockSettled }
        for coordination in views.all { await coordination.coordinator.disconnect() }
        await betweenLinks()
        for coordination in views.all { try await coordination.coordinate(using: medium) }
        await waitUntilClockSettled()
        for coordination in views.all {
            try await coordination.coordinator.join()
        }
    }

    /// Every view's coordinator (the net clock guard suspends them all together).
    public var coordinators: [PlaybackCoordinator] {
        views.all.map(\.coordinator)
    }

    public func coordination(for player: Player) -> PlayerCoordination? { views[player] }

    public func attach(_ player: Player, source: MediaSource) async throws {
        try await views.attach(player, source: source, itemIdentifier: itemIdentifier, medium: medium)
    }

    public func start(_ players: [Player]) async throws {
        for player in players { try await join(player) }
    }

    /// A view joins the group once the clock has settled (it is prerolled meanwhile); this stage's own `join`,
    /// in place of `PlayerCoordinatedStage`'s.
    public func join(_ player: Player) async throws {
        let coordination = try attachedCoordination(for: player)
        await (clockReady.withLock { $0 })()
        try await coordination.coordinator.join()
    }

    /// "What happened?" on a member's view (`PlayerCoordination.whatHappened`): the group's time is read from the
    /// current medium at each check, on its shared clock. The other views, here and elsewhere, never pause.
    public func whatHappened(_ player: Player) async throws {
        try await attachedCoordination(for: player).whatHappened(waitClock: ContinuousClock()) { [self] item in
            let medium = self.medium
            return (await medium.groupState(for: item), medium.clock.time)
        }
    }
}
