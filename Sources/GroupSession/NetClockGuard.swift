import Coordination
import GStreamer
import Synchronization

/// Watches a member's net clock: while it is not synchronised the member's views are suspended
/// (`coordinatedPlaybackNotPossible`: they play on locally, the group's commands skip them) and they rejoin —
/// caught up like late joiners — once it is synchronised again. Each change is one line for the user.
///
/// Threading: the statistics arrive as an `AsyncStream` consumed by one task; the suspensions it holds live in
/// a `Mutex`.
public final class NetClockGuard: Sendable {
    public static let reason = SuspensionReason("coordinatedPlaybackNotPossible")
    private let clock: NetClientClock
    private let coordinators: @Sendable () -> [PlaybackCoordinator]
    private let report: @Sendable (String) -> Void
    private let held = Mutex<[CoordinatedPlaybackSuspension]>([])
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    public init(clock: NetClientClock, coordinators: @escaping @Sendable () -> [PlaybackCoordinator],
                report: @escaping @Sendable (String) -> Void) {
        self.clock = clock
        self.coordinators = coordinators
        self.report = report
    }

    deinit { watcher.withLock { $0?.cancel() } }

    public func start() {
        let statistics = clock.statistics()
        let task = Task { [weak self] in
            var synchronised = true
            for await _ in statistics {
                guard let self else { return }
                let now = self.clock.isSynchronised
                guard now != synchronised else { continue }
                synchronised = now
                await self.changed(synchronised: now)
            }
        }
        watcher.withLock { $0 = task }
    }

    private func changed(synchronised: Bool) async {
        if synchronised {
            report("group session: \(SessionClock.statusLabel(clock)): the views rejoin the group")
            for suspension in held.withLock({ list in defer { list.removeAll() }; return list }) {
                do { try await suspension.end() } catch {
                    report("group session: a view could not rejoin after the net clock came back: \(error)")
                }
            }
        } else {
            report("group session: \(SessionClock.statusLabel(clock)): the views play on their own until it is back")
            for coordinator in coordinators() {
                let suspension = await coordinator.beginSuspension(for: Self.reason)
                held.withLock { $0.append(suspension) }
            }
        }
    }
}
