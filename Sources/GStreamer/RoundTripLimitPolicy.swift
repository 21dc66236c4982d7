/// Chooses a `NetClientClock`'s `round-trip-limit` from the round trips it accepted. Pure (times are durations
/// since any fixed origin, given by the caller).
///
/// Why: an exchange's offset is off by half its path asymmetry, and the exchanges that hurt most are the ones a
/// busy machine delayed on one side (the answer read late, the provider's thread late): a round trip well above
/// the link's usual spread and an offset several ms off (measured behind the 20 ± 5 ms relay: exchanges more than
/// 20 ms above the shortest round trip were off by 3-15 ms on average, the others by 0.3-2 ms). GStreamer's own
/// filters drop only those above twice the median (~80 ms there). So once `learning` exchanges are seen the limit
/// becomes shortest + `spreadFactor` × (median − shortest): for a symmetric spread, its whole width above the
/// shortest — every exchange of the link's own jitter stays in, the delayed ones go. Never below shortest + `floor`
/// (loopback: a few µs of spread), never above `ceiling` (the tuning's limit). The shortest keeps following the
/// accepted round trips (a shorter one lowers the limit); the spread is the learning sample's (accepted round
/// trips are cut at the limit, so they would shrink it). GStreamer discards the exchanges above the limit without
/// a word, so when none is accepted for `silence` (the route got slower) the limit goes back to `ceiling` and the
/// policy learns again.
public struct RoundTripLimitPolicy: Sendable, Equatable {
    public struct Parameters: Sendable, Equatable {
        /// Accepted exchanges (at `ceiling`) the spread is learnt from.
        public var learning: Int
        /// The limit is at least this far above the shortest round trip.
        public var floor: Duration
        /// The limit while learning, and the most it may be.
        public var ceiling: Duration
        /// The limit is the shortest round trip + this × (median − shortest).
        public var spreadFactor: Double
        /// No accepted exchange for this long while limiting → back to `ceiling`, learning again.
        public var silence: Duration

        public init(learning: Int = 200, floor: Duration = .milliseconds(1), ceiling: Duration = .milliseconds(200),
                    spreadFactor: Double = 2, silence: Duration = .seconds(1)) {
            self.learning = max(1, learning); self.floor = floor; self.ceiling = ceiling
            self.spreadFactor = spreadFactor; self.silence = silence
        }
    }

    private enum Phase: Sendable, Equatable {
        case learning([Duration])
        case limiting(shortest: Duration, spread: Duration)
    }

    public let parameters: Parameters
    private var phase: Phase = .learning([])
    private var lastAccepted: Duration?
    /// The limit the clock should have now.
    public private(set) var limit: Duration

    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
        limit = parameters.ceiling
    }

    /// Whether the spread is still being learnt (the limit is `ceiling`).
    public var isLearning: Bool {
        if case .learning = phase { return true }
        return false
    }

    /// One accepted exchange's round trip, at `now`. Returns the new limit when it changed.
    public mutating func accepted(roundTrip: Duration, at now: Duration) -> Duration? {
        lastAccepted = now
        switch phase {
        case .learning(var roundTrips):
            roundTrips.append(roundTrip)
            guard roundTrips.count >= parameters.learning else {
                phase = .learning(roundTrips)
                return nil
            }
            let sorted = roundTrips.sorted()
            let shortest = sorted[0]
            phase = .limiting(shortest: shortest, spread: sorted[sorted.count / 2] - shortest)
        case .limiting(let shortest, let spread):
            guard roundTrip < shortest else { return nil }
            phase = .limiting(shortest: roundTrip, spread: spread)
        }
        return update()
    }

    /// Called now and then (the clock says nothing of the exchanges it discards): returns `ceiling` when it
    /// relaxed the limit after `silence` without an accepted exchange.
    public mutating func tick(at now: Duration) -> Duration? {
        guard case .limiting = phase, let last = lastAccepted, now - last >= parameters.silence else { return nil }
        phase = .learning([])
        lastAccepted = now
        return update()
    }

    private mutating func update() -> Duration? {
        let next: Duration
        switch phase {
        case .learning:
            next = parameters.ceiling
        case .limiting(let shortest, let spread):
            let width = max(parameters.floor, spread * parameters.spreadFactor)
            next = min(parameters.ceiling, shortest + width)
        }
        guard next != limit else { return nil }
        limit = next
        return next
    }
}
