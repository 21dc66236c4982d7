import Coordination
import Foundation
import GStreamer
import Multiview
import Synchronization

/// Plugs a member's views into a group session: every view gets a `PlayerCoordination` on the member's
/// `NetworkCoordinationMedium` under the session's item identifier, and *joins* the group (a member adopts the
/// group's state — time, rate, playing — instead of starting it, as a late joiner does in process).
///
/// Threading: the coordinations live in a `Mutex`-protected table keyed by view number.
public final class NetworkCoordinatedStage: StageCoordination, Sendable {
    public let itemIdentifier: String
    private let coordinations = Mutex<[Int: PlayerCoordination]>([:])
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
    /// each view leaves the old medium (its pipeline gives the old clock back), adopts the new clock and
    /// catches up with the group like a late joiner.
    public func move(to medium: NetworkCoordinationMedium,
                     waitUntilClockSettled: @escaping @Sendable () async -> Void = {}) async throws {
        currentMedium.withLock { $0 = medium }
        clockReady.withLock { $0 = waitUntilClockSettled }
        for coordination in coordinations.withLock({ $0.sorted { $0.key < $1.key }.map(\.value) }) {
            await coordination.coordinator.disconnect()
            try await coordination.coordinate(using: medium)
        }
        await waitUntilClockSettled()
        for coordination in coordinations.withLock({ $0.sorted { $0.key < $1.key }.map(\.value) }) {
            try await coordination.coordinator.join()
        }
    }

    /// Every view's coordinator (the net clock guard suspends them all together).
    public var coordinators: [PlaybackCoordinator] {
        coordinations.withLock { $0.sorted { $0.key < $1.key }.map(\.value.coordinator) }
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
        for player in players { try await join(player) }
    }

    /// A view joins the group once the clock has settled (it is prerolled meanwhile).
    public func join(_ player: Player) async throws {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        await (clockReady.withLock { $0 })()
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

    /// "What happened?" on a member's view: suspended, 5 s back at 2× until it reaches the group's time (on the
    /// shared clock), then it rejoins. The other views, here and elsewhere, never pause.
    public func whatHappened(_ player: Player) async throws {
        guard let coordination = coordination(for: player) else { throw CoordinationError.notConnected }
        let coordinator = coordination.coordinator
        let suspension = await coordinator.beginSuspension(for: .whatHappened)
        do {
            let now = await player.position ?? .zero
            try await player.seekLocally(to: ClockTime.seconds(max(0, now.seconds - 5)))
            try await player.setRateLocally(2.0)
            try await player.playLocally()
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let group = await medium.groupState(for: itemIdentifier)
                let groupTime = group?.mediaTime(at: medium.clock.time) ?? .zero
                if await player.position ?? .zero >= groupTime || group?.isPlaying != true { break }
                try await Task.sleep(for: .milliseconds(50))
            }
        } catch {
            try? await suspension.end()
            throw error
        }
        try await suspension.end()
    }
}
