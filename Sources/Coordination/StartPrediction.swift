/// Where a group command's start instant goes when some participants are across a network (a session host with
/// members): chosen *before* anyone is ready, from what is known, and sent with the "prepare" itself, so that
/// "start at C" does not wait for every readiness to come back first.
///
/// The barrier (`runBarrier` without a prediction) costs a member two trips on top of its preparation: "prepare"
/// out, "ready" back, then a margin long enough for "start at C" to go out again (25 ms + one round trip). Behind
/// 20 ± 5 ms each way that put seek → aligned at 134–205 ms (2–8 members), twice the goal of issue 17 (1.2 × the
/// in-process figure + one round trip). Predicted, the instant is
///
///     now + delivery + expected preparation × 6/5 + floor + extra
///
/// - `delivery`: how long "prepare" may take to reach the farthest participant; the session host gives the
///   slowest member's round trip (one way is about half, so the other half is slack for jitter and a busy
///   reader).
/// - the expected preparation: the slowest participant's last one, as measured where it ran
///   (`GroupRoster.Entry.expectedPrepare`); 6/5 covers how much one preparation differs from the next (catch-ups
///   under load took 0.65–1.09 × the one before, `CatchUpPlanner`).
/// - `floor`: the in-process margin (the sinks' start, `StartMarginPolicy`).
/// - `extra`: grows after a start somebody missed (doubles, at least 10 ms, at most `maximumExtra`) and halves
///   after each start nobody missed. A participant that misses the instant is caught up like a late joiner, so a
///   miss costs it 150–250 ms; `extra` keeps a slow machine from paying that at every command.
///
/// A value: the medium keeps one while a prediction is set (`PlaybackCoordinationMedium.setStartPrediction`) and
/// feeds it every predicted start's outcome. Pure.
public struct StartPrediction: Sendable, Equatable {
    public var delivery: Duration
    public var floor: Duration
    public var maximumExtra: Duration
    public private(set) var extra: Duration = .zero
    /// What `extra` becomes at least after a miss.
    public static let firstExtra: Duration = .milliseconds(10)

    public init(delivery: Duration, floor: Duration = .milliseconds(2), maximumExtra: Duration = .milliseconds(200)) {
        self.delivery = delivery
        self.floor = floor
        self.maximumExtra = maximumExtra
    }

    /// How far ahead of the command the start instant goes, for participants that prepare in `expectedPrepare`.
    public func lead(expectedPrepare: Duration) -> Duration {
        delivery + expectedPrepare * 6 / 5 + floor + extra
    }

    /// A predicted start happened; `missed` participants were ready only after its instant.
    public mutating func recordStart(missed: Int) {
        if missed == 0 {
            extra = extra < .milliseconds(1) ? .zero : extra / 2
        } else {
            extra = min(max(extra * 2, Self.firstExtra), maximumExtra)
        }
    }

    /// The same prediction with a new delivery (the round trips change), keeping what recent misses added.
    public func with(delivery: Duration) -> StartPrediction {
        var copy = self
        copy.delivery = delivery
        return copy
    }
}
