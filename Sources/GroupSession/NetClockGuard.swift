import Coordination
import GStreamer
import Synchronization

/// Watches a member's net clock: while it is not synchronised the member's views are suspended
/// (`coordinatedPlaybackNotPossible`: they play on locally, the group's commands skip them) and they rejoin —
/// caught up like late joiners — once it is synchronised again. Each change is one line for the user.
///
/// Not synchronised: GStreamer says so (its flag drops only when the provider's time goes back), or no exchange
/// with the provider was accepted for `silenceLimit` — its UDP blocked or lost while the control channel lives —
/// so the clock runs on its last calibration alone (GStreamer still calls it synced then).
///
/// Threading: the statistics arrive as an `AsyncStream` consumed by one task, which stamps `lastHeard` (a
/// `Mutex`); a second task judges every 100 ms; the suspensions it holds live in a `Mutex`.
public final class NetClockGuard: Sendable {
    public static let reason = SuspensionReason("coordinatedPlaybackNotPossible")
    /// As long as the control channel may stay silent (`SessionMember.hostSilenceLimit`): at 20 ms polls that is
    /// some 150 exchanges, and on loopback under load GStreamer drops an exchange as bogus now and then (a round
    /// trip over twice its average), waiting 250 ms before the next.
    public static let silenceLimit: Duration = .seconds(3)
    private let clock: NetClientClock
    private let coordinators: @Sendable () -> [PlaybackCoordinator]
    private let report: @Sendable (String) -> Void
    private let held = Mutex<[CoordinatedPlaybackSuspension]>([])
    private let lastHeard = Mutex(ContinuousClock.now)
    private let watchers = Mutex<[Task<Void, Never>]>([])

    public init(clock: NetClientClock, coordinators: @escaping @Sendable () -> [PlaybackCoordinator],
                report: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.coordinators = coordinators
        self.report = report
    }

    deinit { watchers.withLock { $0.forEach { $0.cancel() } } }

    public func start() {
        let statistics = clock.statistics()
        lastHeard.withLock { $0 = .now }
        let listener = Task { [weak self] in
            for await _ in statistics {
                guard let self else { return }
                self.lastHeard.withLock { $0 = .now }
            }
        }
        let judge = Task { [weak self] in
            var synchronised = true
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard let self else { return }
                let silence = ContinuousClock.now - self.lastHeard.withLock { $0 }
                let now = self.clock.isSynchronised && silence < Self.silenceLimit
                guard now != synchronised else { continue }
                synchronised = now
                await self.changed(synchronised: now, silence: silence)
            }
        }
        watchers.withLock { $0 = [listener, judge] }
    }

    /// Stops watching and ends the suspensions it holds (the views rejoin through their current medium): for a
    /// member that moves to a new link, whose clock gets a guard of its own.
    public func stop() async {
        watchers.withLock { $0.forEach { $0.cancel() } }
        await endHeld()
    }

    private func endHeld() async {
        for suspension in held.withLock({ list in defer { list.removeAll() }; return list }) {
            do { try await suspension.end() } catch {
                report("group session: a view could not rejoin after the net clock came back: \(error)")
            }
        }
    }

    private func changed(synchronised: Bool, silence: Duration) async {
        if synchronised {
            report("group session: \(SessionClock.statusLabel(clock)): the views rejoin the group")
            await endHeld()
        } else {
            let why = silence >= Self.silenceLimit
                ? String(format: "no answer from the host's net clock for %.1f s", Double(silence.components.seconds)
                         + Double(silence.components.attoseconds) / 1e18)
                : SessionClock.statusLabel(clock)
            report("group session: \(why): the views play on their own until it is back")
            for coordinator in coordinators() {
                let suspension = await coordinator.beginSuspension(for: Self.reason)
                held.withLock { $0.append(suspension) }
            }
        }
    }
}
