import Synchronization

/// Applies a `RoundTripLimitPolicy` to a `NetClientClock`: every accepted exchange's round trip goes into the
/// policy, and a new limit is set on the clock (`round-trip-limit`, which GStreamer reads at each exchange).
///
/// Threading: the policy lives in a `Mutex`. One task consumes the clock's statistics stream and one ticks every
/// 250 ms (GStreamer says nothing of the exchanges it discards, so only time tells a limit that lets none through);
/// both hold the clock weakly and end when it is released, or at `stop()`.
final class RoundTripLimiter: Sendable {
    private let policy: Mutex<RoundTripLimitPolicy>
    private let tasks = Mutex<[Task<Void, Never>]>([])

    init(clock: NetClientClock, parameters: RoundTripLimitPolicy.Parameters) {
        policy = Mutex(RoundTripLimitPolicy(parameters: parameters))
        let origin = ContinuousClock.now
        let statistics = clock.statistics()
        let watch = Task { [weak clock, weak self] in
            for await observation in statistics {
                guard let self else { return }
                let now = ContinuousClock.now - origin
                if let limit = self.policy.withLock({ $0.accepted(roundTrip: observation.roundTrip, at: now) }) {
                    clock?.roundTripLimit = limit
                }
            }
        }
        let ticker = Task { [weak clock, weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
                guard let self, let clock else { return }
                let now = ContinuousClock.now - origin
                if let limit = self.policy.withLock({ $0.tick(at: now) }) { clock.roundTripLimit = limit }
            }
        }
        tasks.withLock { $0 = [watch, ticker] }
    }

    /// The limit the policy chose last (the clock's, unless another client of the same provider asks more).
    var limit: Duration { policy.withLock { $0.limit } }

    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    deinit { stop() }
}
