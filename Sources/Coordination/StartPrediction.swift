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
/// - `delivery`: how long "prepare" may take to reach the farthest participant; the session host gives the longest
///   recent one-way delay of its members + 5 ms (`SessionHost.predictionDelivery`).
/// - the expected preparation: the slowest participant's last one, as measured where it ran
///   (`GroupRoster.Entry.ownPrepare`); 6/5 covers how much one preparation differs from the next (catch-ups
///   under load took 0.65–1.09 × the one before, `CatchUpPlanner`).
/// - `floor`: the in-process margin (the sinks' start, `StartMarginPolicy`).
/// - `extra`: grows after a start somebody missed (doubles, at least 10 ms, at most `maximumExtra`) and halves
///   after each start nobody missed. A participant that misses the instant is caught up like a late joiner, so a
///   miss costs it 150–250 ms; `extra` keeps a slow machine from paying that at every command.
///
/// **When not to predict.** C is only as good as the preparation it counts on. Before the group's first command
/// with its members, that is each member's join catch-up, and joins overstate a seek: 8 members joining together
/// (load 4.7) measured 41–231 ms where the seek after took 50–105 ms, so the predicted lead (318 ms) was longer
/// than the whole barrier (~205 ms). The barrier waits for the real preparations instead. So a command is predicted
/// only when its lead is no longer than what the barrier would take (`barrierEstimate`: a round trip for "prepare"
/// and "ready", the slowest preparation, the barrier's margin of `barrierMargin` + a round trip), counting a
/// measure from a catch-up at half (`barrierPreparation`). With 2 and 4 members (preparations 6–51 ms) that always
/// predicts; with 8 joined together it runs the first seek as a barrier, whose measures then predict the next.
///
/// A value: the medium keeps one while a prediction is set (`PlaybackCoordinationMedium.setStartPrediction`) and
/// feeds it every predicted start's outcome. Pure.
public struct StartPrediction: Sendable, Equatable {
    public var delivery: Duration
    /// The slowest member's round trip (what a barrier's exchanges and margin cost).
    public var roundTrip: Duration
    /// A barrier's margin beyond one round trip (the session host's `networkMarginBase`).
    public var barrierMargin: Duration
    public var floor: Duration
    public var maximumExtra: Duration
    public private(set) var extra: Duration = .zero
    /// What `extra` becomes at least after a miss.
    public static let firstExtra: Duration = .milliseconds(10)

    public init(delivery: Duration, roundTrip: Duration = .zero, barrierMargin: Duration = .milliseconds(25),
                floor: Duration = .milliseconds(2), maximumExtra: Duration = .milliseconds(200)) {
        self.delivery = delivery
        self.roundTrip = roundTrip
        self.barrierMargin = barrierMargin
        self.floor = floor
        self.maximumExtra = maximumExtra
    }

    /// How far ahead of the command the start instant goes, for participants that prepare in `expectedPrepare`.
    public func lead(expectedPrepare: Duration) -> Duration {
        delivery + expectedPrepare * 6 / 5 + floor + extra
    }

    /// What a barrier would take from the command to its instant: "prepare" out and "ready" back (a round trip),
    /// the slowest preparation, and its margin (`barrierMargin` + a round trip).
    public func barrierEstimate(slowestPrepare: Duration) -> Duration {
        roundTrip * 2 + barrierMargin + slowestPrepare
    }

    /// The slowest preparation a barrier is estimated with: each participant's measure, one from a catch-up (a
    /// join) at half (see "When not to predict"); nil for none.
    public static func barrierPreparation(_ measures: [(prepare: Duration, fromCatchUp: Bool)]) -> Duration? {
        measures.map { $0.fromCatchUp ? $0.prepare / 2 : $0.prepare }.max()
    }

    /// Whether a command is predicted: its lead is no longer than the barrier's estimate.
    public func beatsBarrier(expectedPrepare: Duration, barrierPrepare: Duration) -> Bool {
        lead(expectedPrepare: expectedPrepare) <= barrierEstimate(slowestPrepare: barrierPrepare)
    }

    /// A predicted start happened; `missed` participants were ready only after its instant.
    public mutating func recordStart(missed: Int) {
        if missed == 0 {
            extra = extra < .milliseconds(1) ? .zero : extra / 2
        } else {
            extra = min(max(extra * 2, Self.firstExtra), maximumExtra)
        }
    }

    /// The same prediction with a new delivery and round trip, keeping what recent misses added.
    public func with(delivery: Duration, roundTrip: Duration) -> StartPrediction {
        var copy = self
        copy.delivery = delivery
        copy.roundTrip = roundTrip
        return copy
    }
}
