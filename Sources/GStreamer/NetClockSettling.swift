import Synchronization

/// Decides from a `NetClientClock`'s statistics when it has *settled*: not merely synchronised (GStreamer says so
/// after its first accepted exchange, which on a jittery link or a busy machine is some ms off), but with a
/// calibration that has stopped moving — the offsets of the last `window` accepted observations all lie within
/// `spread`. A group member starts playing in the group only then: a start placed on a clock that then moves by
/// 3 ms is heard 3 ms off (its audio follows the clock slowly, by design; see `AudioClockFollower`). Pure.
public struct NetClockSettling: Sendable, Equatable {
    /// Defaults measured with `netclock-baseline probe` behind the 20 ± 5 ms relay (2 busy cores): the clock's
    /// true error is 2–11 ms in the first 0.3 s after sync and mostly under ~1 ms from 0.5–0.75 s on, while its
    /// calibration offset keeps wobbling 0.3–1 ms for seconds as the 128-observation window fills. Window 8,
    /// spread 1 ms settled 0.3–0.4 s after sync (true error after it: p50 0.27–0.46 ms, max 1.3–2.1 ms); 12 × 1 ms
    /// took 0.9–1.7 s (join → first frame 1.3–3.7 s in bench-network, over the 1.5 s goal) and 16 × 0.3 ms
    /// 1.6–3.5 s, for no clearly lower error after.
    public struct Criteria: Sendable, Equatable {
        /// Consecutive accepted observations whose offsets are compared (~50 exchanges a second at 20 ms polls).
        public var window: Int
        /// The most their offsets may differ.
        public var spread: Duration
        /// An exchange counts as accepted when GStreamer called it synchronised or it agreed with the clock
        /// within this (`NetClockStatistics.agrees(within:)`): on loopback GStreamer's own bound is a few tens of
        /// µs, and under load it accepted 2 exchanges of 626 in 5 s, so the window never filled.
        public var agreement: Duration

        public init(window: Int = 8, spread: Duration = .milliseconds(1), agreement: Duration = .microseconds(250)) {
            self.window = max(2, window)
            self.spread = spread
            self.agreement = agreement
        }
    }

    public let criteria: Criteria
    private var offsets: [Int64] = []
    /// Accepted observations seen, and observations seen at all.
    public private(set) var accepted = 0
    public private(set) var observed = 0
    /// Settled now: the last `window` accepted observations, in a row, within `spread`.
    public private(set) var isSettled = false
    /// The offset spread of the last full window (ns), nil before the first one.
    public private(set) var lastSpread: Duration?

    public init(criteria: Criteria = Criteria()) { self.criteria = criteria }

    /// Takes one observation; returns `isSettled` afterwards. An observation that did not agree with the clock
    /// (not synchronised nor within `criteria.agreement`: the clock is off, or the exchange was delayed) breaks
    /// the run; one without an offset (an older GStreamer) counts as accepted with its step (`discontinuity`) as
    /// the only movement.
    @discardableResult
    public mutating func observe(_ statistics: NetClockStatistics) -> Bool {
        observed += 1
        guard statistics.agrees(within: criteria.agreement) else {
            offsets.removeAll(keepingCapacity: true)
            isSettled = false
            return false
        }
        accepted += 1
        let offset = statistics.localClockOffset.map(Self.nanoseconds)
            ?? ((offsets.last ?? 0) + Self.nanoseconds(statistics.discontinuity))
        offsets.append(offset)
        if offsets.count > criteria.window { offsets.removeFirst(offsets.count - criteria.window) }
        guard offsets.count == criteria.window, let low = offsets.min(), let high = offsets.max() else {
            isSettled = false
            return false
        }
        lastSpread = .nanoseconds(high - low)
        isSettled = high - low <= Self.nanoseconds(criteria.spread)
        return isSettled
    }

    private static func nanoseconds(_ d: Duration) -> Int64 {
        d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000
    }
}

/// Watches one `NetClientClock` from its creation and tells when it first settled (`NetClockSettling`):
/// `waitUntilSettled` returns at once afterwards.
///
/// Threading: one task consumes the clock's statistics stream; the tracker, the first-settled instant and the
/// waiters live in one `Mutex` (waiters are resumed outside it).
public final class NetClockSettlement: Sendable {
    public struct Outcome: Sendable, Equatable {
        /// Observations (all, and accepted ones) until the clock first settled.
        public var observed: Int
        public var accepted: Int
        /// The offsets' spread over the settling window.
        public var spread: Duration

        public init(observed: Int, accepted: Int, spread: Duration) {
            self.observed = observed; self.accepted = accepted; self.spread = spread
        }
    }

    private struct State {
        var tracker: NetClockSettling
        var outcome: Outcome?
        var waiters: [Int: CheckedContinuation<Outcome?, Never>] = [:]
        var nextWaiter = 0
        var finished = false
    }
    private let state: Mutex<State>
    private let watcher = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching `statistics` (subscribe right after making the clock, so that no exchange is missed).
    public init(statistics: AsyncStream<NetClockStatistics>, criteria: NetClockSettling.Criteria = .init()) {
        state = Mutex(State(tracker: NetClockSettling(criteria: criteria)))
        let task = Task { [weak self] in
            for await observation in statistics {
                guard let self else { return }
                self.record(observation)
            }
            self?.finish()
        }
        watcher.withLock { $0 = task }
    }

    public convenience init(clock: NetClientClock, criteria: NetClockSettling.Criteria = .init()) {
        self.init(statistics: clock.statistics(), criteria: criteria)
    }

    deinit { watcher.withLock { $0?.cancel() } }

    /// How the clock first settled; nil while it has not.
    public var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Whether the clock is settled *now* (the last window of observations).
    public var isSettled: Bool { state.withLock { $0.tracker.isSettled } }

    func record(_ observation: NetClockStatistics) {
        let resumed: (Outcome, [CheckedContinuation<Outcome?, Never>])? = state.withLock { s in
            guard s.tracker.observe(observation), s.outcome == nil else { return nil }
            let outcome = Outcome(observed: s.tracker.observed, accepted: s.tracker.accepted,
                                  spread: s.tracker.lastSpread ?? .zero)
            s.outcome = outcome
            defer { s.waiters.removeAll() }
            return (outcome, Array(s.waiters.values))
        }
        if let (outcome, waiters) = resumed { for waiter in waiters { waiter.resume(returning: outcome) } }
    }

    private func finish() {
        let waiters = state.withLock { s in
            s.finished = true
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// How a bounded wait for a settled clock ended.
    public enum BoundedWait: Sendable, Equatable {
        case settled(Outcome)
        /// `limit` passed first: the clock is synchronised or not, but its offsets still move by more than the
        /// criteria allow (`spread` over the last full window, nil before one; `accepted` of `observed`).
        case notSettled(spread: Duration?, accepted: Int, observed: Int)
        /// The clock went away, or the waiting task was cancelled.
        case gone
    }

    /// Waits for the clock to settle, but no longer than `limit`. A busy machine can keep the offsets wobbling
    /// past the spread for a long time (every unaccepted exchange restarts the window); a caller that must play
    /// on asks with a limit and says what it got.
    public func waitUntilSettled(limit: Duration) async -> BoundedWait {
        let first: Outcome?? = await withTaskGroup(of: Outcome??.self) { group in
            group.addTask { .some(await self.waitUntilSettled()) }
            group.addTask {
                try? await Task.sleep(for: limit)
                return .none
            }
            let result = await group.next() ?? .none
            group.cancelAll()
            return result
        }
        switch first {
        case .some(.some(let outcome)): return .settled(outcome)
        case .some(.none): return .gone
        case .none:
            if Task.isCancelled { return .gone }
            return state.withLock { s in
                if let outcome = s.outcome { return .settled(outcome) }
                return .notSettled(spread: s.tracker.lastSpread, accepted: s.tracker.accepted, observed: s.tracker.observed)
            }
        }
    }

    /// Returns how the clock first settled, as soon as it has (at once if it already had); nil when the clock
    /// went away first or the task was cancelled.
    public func waitUntilSettled() async -> Outcome? {
        let id = state.withLock { s -> Int in defer { s.nextWaiter += 1 }; return s.nextWaiter }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome?, Never>) in
                let immediate: Outcome?? = state.withLock { s in
                    if let outcome = s.outcome { return .some(outcome) }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiters[id] = continuation
                    return .none
                }
                if case .some(let answer) = immediate { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }
}
