/// How far in the future a coordinated start is placed once everyone is ready: enough to run every participant's
/// prepared start (its sinks, ~0.02-0.1 ms each) before the instant.
///
/// The margin is `floor`, plus `perParticipantBeyondFour` for each participant beyond four, plus an extra that
/// doubles (at least to `floor`, at most `maximumExtra`) after a start that somebody missed and halves after each
/// start nobody missed (dropping to zero below 1 ms). Prepared starts run in one real-time loop: four views are
/// started ~0.2 ms after the instant is chosen, nine ~0.3 ms after (sync-report, 2 cores), so 1 ms would do for
/// video; the 2 ms floor is for the audio sinks, which place their first samples more precisely with a little more
/// lead: with 1 ms, two views' clicks were heard 1.5-3.6 ms apart in 4 of 18 bench-audio runs, with 2 ms at most
/// 1.04 ms in 12 runs (1.88 ms under two CPU-hog loops, 6 runs). Each miss costs ~150-250 ms of catch-up.
///
/// A value: the medium keeps one and feeds it every start's outcome.
public struct StartMarginPolicy: Sendable, Equatable {
    public var floor: Duration
    public var perParticipantBeyondFour: Duration
    public var maximumExtra: Duration
    /// What recent missed instants add (see above).
    public private(set) var extra: Duration = .zero

    public init(floor: Duration = .milliseconds(2), perParticipantBeyondFour: Duration = .microseconds(100),
                maximumExtra: Duration = .milliseconds(48)) {
        self.floor = floor
        self.perParticipantBeyondFour = perParticipantBeyondFour
        self.maximumExtra = maximumExtra
    }

    /// The margin for a start of `participants` participants.
    public func margin(participants: Int) -> Duration {
        floor + extra + perParticipantBeyondFour * max(0, participants - 4)
    }

    /// A start happened; `missed` participants got "play at C" after C.
    public mutating func recordStart(missed: Int) {
        if missed == 0 {
            extra = extra < .milliseconds(1) ? .zero : extra / 2
        } else {
            extra = min(max(extra * 2, floor), maximumExtra)
        }
    }
}
