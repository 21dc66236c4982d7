import Coordination
import GStreamer
import Synchronization

/// Watches a member's net clock: while it is not synchronised the member's views are suspended
/// (`coordinatedPlaybackNotPossible`: they play on locally, the group's commands skip them) and they rejoin —
/// caught up like late joiners — once it is synchronised again. Each change is one line for the user.
///
/// Not synchronised: GStreamer says so for `flagLimit` on end (its flag drops only when the provider's time goes
/// back), or no exchange with the provider was accepted for `silenceLimit` — its UDP blocked or lost while the
/// control channel lives — so the clock runs on its last calibration alone (GStreamer still calls it synced then).
///
/// Why the flag must stay down a while: behind a jittery link (the bench's relay, 20 ± 5 ms each way, polls every
/// 5 ms) answers arrive out of order, and an older answer carries an older provider time: GStreamer reads that as
/// the provider's time going back and drops its flag until a later exchange raises it, some 0.1 s later. Judged at
/// once, that suspended a member's view in 6 of 28 `Scripts/bench-network` runs (2 members): it played on alone
/// and was caught up again, and in one of them a click heard meanwhile was 353 ms off the other member's. A
/// provider that really went back (a new host) keeps the flag down, and the member's control channel tells of it.
///
/// Threading: the statistics arrive as an `AsyncStream` consumed by one task, which stamps `lastHeard` (a
/// `Mutex`); a second task judges every 100 ms and alone begins and ends suspensions until `stop()`, which waits
/// for it to finish; the suspensions it holds live in a `Mutex`.
public final class NetClockGuard: Sendable {
    public static let reason = SuspensionReason("coordinatedPlaybackNotPossible")
    /// As long as the control channel may stay silent (`SessionMember.hostSilenceLimit`): at 20 ms polls that is
    /// some 150 exchanges, and on loopback under load GStreamer drops an exchange as bogus now and then (a round
    /// trip over twice its average), waiting 250 ms before the next.
    public static let silenceLimit: Duration = .seconds(3)
    /// How long GStreamer's flag must stay down before the views are suspended (see above).
    public static let flagLimit: Duration = .milliseconds(500)
    /// The watched clock, as closures (a `NetClientClock`'s, or a test's): a new statistics stream, GStreamer's
    /// synchronised flag, the status line.
    private let statistics: @Sendable () -> AsyncStream<NetClockStatistics>
    private let isSynchronised: @Sendable () -> Bool
    private let status: @Sendable () -> String
    private let limit: Duration
    private let flagLimit: Duration
    private let coordinators: @Sendable () -> [PlaybackCoordinator]
    private let report: @Sendable (String) -> Void
    private let held = Mutex<[CoordinatedPlaybackSuspension]>([])
    private let lastHeard = Mutex(ContinuousClock.now)
    private let watchers = Mutex<[Task<Void, Never>]>([])

    public convenience init(clock: NetClientClock, coordinators: @escaping @Sendable () -> [PlaybackCoordinator],
                            report: @escaping @Sendable (String) -> Void) {
        self.init(statistics: { clock.statistics() }, isSynchronised: { clock.isSynchronised },
                  status: { SessionClock.statusLabel(clock) }, coordinators: coordinators, report: report)
    }

    init(statistics: @escaping @Sendable () -> AsyncStream<NetClockStatistics>, isSynchronised: @escaping @Sendable () -> Bool,
         status: @escaping @Sendable () -> String, silenceLimit: Duration = NetClockGuard.silenceLimit,
         flagLimit: Duration = NetClockGuard.flagLimit, coordinators: @escaping @Sendable () -> [PlaybackCoordinator],
         report: @escaping @Sendable (String) -> Void) {
        self.statistics = statistics
        self.isSynchronised = isSynchronised
        self.status = status
        self.limit = silenceLimit
        self.flagLimit = flagLimit
        self.coordinators = coordinators
        self.report = report
    }

    deinit { watchers.withLock { $0.forEach { $0.cancel() } } }

    public func start() {
        let statistics = self.statistics()
        lastHeard.withLock { $0 = .now }
        let listener = Task { [weak self] in
            for await _ in statistics {
                guard let self else { return }
                self.lastHeard.withLock { $0 = .now }
            }
        }
        let judge = Task { [weak self] in
            var synchronised = true
            var flagDownSince: ContinuousClock.Instant?
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard !Task.isCancelled, let self else { return }
                let silence = ContinuousClock.now - self.lastHeard.withLock { $0 }
                if self.isSynchronised() {
                    flagDownSince = nil
                } else if flagDownSince == nil {
                    flagDownSince = .now
                }
                let flagDown = flagDownSince.map { ContinuousClock.now - $0 >= self.flagLimit } ?? false
                let now = !flagDown && silence < self.limit
                guard now != synchronised else { continue }
                synchronised = now
                await self.changed(synchronised: now, silence: silence)
            }
        }
        watchers.withLock { $0 = [listener, judge] }
    }

    /// Stops watching and ends the suspensions it holds (a view rejoins through its medium, if it has one): for a
    /// member that moves to a new link, whose clock gets a guard of its own. Returns once the judging task has
    /// finished — a change it was making (suspending the views, or ending their suspensions) is complete and
    /// none follows — so that no suspension of this guard is left held, or begun, afterwards.
    public func stop() async {
        let tasks = watchers.withLock { list in defer { list.removeAll() }; return list }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
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
            report("group session: \(status()): the views rejoin the group")
            await endHeld()
        } else {
            let why = silence >= limit
                ? String(format: "no answer from the host's net clock for %.1f s", Double(silence.components.seconds)
                         + Double(silence.components.attoseconds) / 1e18)
                : status()
            report("group session: \(why): the views play on their own until it is back")
            for coordinator in coordinators() {
                let suspension = await coordinator.beginSuspension(for: Self.reason)
                held.withLock { $0.append(suspension) }
            }
        }
    }
}
