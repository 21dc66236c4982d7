/// A token bucket per sender: `burst` commands at once, then `perSecond`. Time is passed in (seconds on any
/// monotonic clock), so the limiter is a pure value tested without waiting.
public struct CommandRateLimiter: Sendable, Equatable {
    public let burst: Double
    public let perSecond: Double
    private var tokens: Double
    private var last: Double?

    public init(burst: Int = 8, perSecond: Double = 4) {
        self.burst = Double(burst)
        self.perSecond = perSecond
        self.tokens = Double(burst)
    }

    /// Takes one token; false when the bucket is empty (the command is dropped).
    public mutating func allow(at now: Double) -> Bool {
        if let last { tokens = min(burst, tokens + max(0, now - last) * perSecond) }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
