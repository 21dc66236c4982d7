/// How long a barrier waits for its participants to be ready, and how often the medium tries again to bring back
/// one it left behind (Apple's semantics: a participant that cannot keep up is suspended, the group is not held).
///
/// The wait follows progress: every participant gets at least `minimumWait` from the command, and the stragglers
/// `graceAfterLastReady` after the latest one that got ready, never more than `limit` in all. A machine that is
/// slow but getting there keeps the group together; a participant stuck while the others are ready holds them
/// for `minimumWait` (or the grace) once, is left behind (suspended with `coordinatedPlaybackNotPossible`), and
/// skipped by the group's commands until the medium has caught it up (`retryDelay` between attempts).
///
/// A value; all spans are on the medium's wait clock, counted from the command. Pure: no clock of its own.
public struct ReadinessPolicy: Sendable, Equatable {
    /// Nobody is waited for longer than this (the medium's ready timeout).
    public var limit: Duration
    /// Everyone gets at least this long to be ready, however early the others were.
    public var minimumWait: Duration
    /// The stragglers get this long after the latest participant got ready.
    public var graceAfterLastReady: Duration
    /// The first pause before trying to bring back a participant left behind; doubled after each failed attempt,
    /// up to `maximumRetryDelay`.
    public var firstRetryDelay: Duration
    public var maximumRetryDelay: Duration

    public init(limit: Duration = .seconds(10), minimumWait: Duration = .seconds(4),
                graceAfterLastReady: Duration = .seconds(2), firstRetryDelay: Duration = .seconds(1),
                maximumRetryDelay: Duration = .seconds(30)) {
        self.limit = limit
        self.minimumWait = minimumWait
        self.graceAfterLastReady = graceAfterLastReady
        self.firstRetryDelay = firstRetryDelay
        self.maximumRetryDelay = maximumRetryDelay
    }

    /// When (since the command) the barrier stops waiting for the participants not ready yet, given when each of
    /// the others got ready (`readyAfter`, in any order). Nobody ready yet: the whole `limit`.
    public func deadline(readyAfter: [Duration]) -> Duration {
        guard let latest = readyAfter.max() else { return limit }
        return min(limit, max(minimumWait, latest + graceAfterLastReady))
    }

    /// Whether the barrier stops waiting at `elapsed` since the command: everyone expected is ready, or the
    /// deadline has come.
    public func stopsWaiting(expecting count: Int, readyAfter: [Duration], elapsed: Duration) -> Bool {
        readyAfter.count >= count || elapsed >= deadline(readyAfter: readyAfter)
    }

    /// The pause before the next attempt to bring back a participant left behind, after `failedAttempts` failed.
    public func retryDelay(afterFailedAttempts failedAttempts: Int) -> Duration {
        var delay = firstRetryDelay
        for _ in 0..<max(0, failedAttempts) where delay < maximumRetryDelay { delay = delay * 2 }
        return min(delay, maximumRetryDelay)
    }
}
