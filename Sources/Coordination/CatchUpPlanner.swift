import GStreamer

/// The schedule that puts one participant on a group's running timeline (a late joiner, the end of a suspension,
/// a participant that missed a start instant): it prepares at the media time the group will be at when it is
/// ready — aiming `lead` ahead of now — then starts exactly when the group reaches that time.
///
/// The lead is learned from this participant's own preparations: 5/4 of the last one it measured plus 100 ms
/// (`lead(forPrepare:misses:)`). From the aim to the start the view shows "waiting for coordinated playback": it
/// prepares for p, then waits lead − p, idle. The former rule (twice p plus 80 ms, doubled after each miss) idled
/// as long as it prepared: a stalled HTTP view whose start preparation took 2.4 s aimed 4.9 s ahead and started
/// 4.87 s after its suspension ended (StallRecoveryTests allows 5 s: the flake of issue 13), and the soak's HLS
/// views aimed 5–7 s ahead (issue 15). A quarter of p covers how much one view's preparations differ from one aim
/// to the next (StallRecoveryTests, 18 runs under load 3–20: each catch-up's preparation took 0.65–1.09 × the one
/// measured before it); 100 ms the answer's way back and the start. Preparing too long (the group passed the prepared time) is a miss: it aims again from what that
/// preparation measured, half of it further ahead per miss so far — so the second aim leaves 7/4 of the time the
/// first one really took. A command that moved the group meanwhile is no miss: it aims at the new timeline.
///
/// A value the medium steps through; all times are on the pipelines' clock. Pure: no I/O, no clock of its own.
public struct CatchUpPlanner: Sendable, Equatable {
    /// How many aims before giving up (`NotReadyReason.couldNotCatchUp`).
    public static let maximumAttempts = 6
    /// A start instant closer than this to now is not sent: "play at" would likely arrive after it.
    public static let minimumStartLead: Duration = .milliseconds(5)
    /// On top of the expected preparation: the answer's way back and "play at" (a few actor hops).
    public static let slack: Duration = .milliseconds(100)

    /// How far ahead of now the next aim is.
    public private(set) var lead: Duration
    public private(set) var attempts = 0
    /// Aims that came too late: prepared after the group passed them, or "play at" after the instant.
    public private(set) var misses = 0
    /// The preparation the next aim counts on: the last one measured.
    public private(set) var expectedPrepare: Duration

    /// `lastPrepare`: the participant's last measured seek+preroll (by a barrier or a catch-up).
    public init(lastPrepare: Duration) {
        expectedPrepare = lastPrepare
        lead = Self.lead(forPrepare: lastPrepare, misses: 0)
    }

    /// The lead for a preparation that takes `prepare`, after `misses` aims that were too late: (5 + 2·misses)/4
    /// of it, plus `slack`.
    public static func lead(forPrepare prepare: Duration, misses: Int = 0) -> Duration {
        prepare * (5 + 2 * misses) / 4 + slack
    }

    /// A group that is paused (or has no start instant yet) is joined by preparing and pausing at its time; only
    /// a running group needs the aiming below.
    public static func joinsPaused(_ group: GroupState) -> Bool { !group.isPlaying || group.anchorClock == nil }

    /// How a participant joins its group.
    public enum Join: Sendable, Equatable {
        /// The group is paused (or a start that was never run left it without an instant): prepare and pause at
        /// its time.
        case paused
        /// A barrier is preparing the group's start: there is no instant to aim at yet, and pausing would leave the
        /// participant paused for good (the barrier starts only those it asked to prepare). Wait for the instant,
        /// then aim.
        case afterTheStart
        /// The group runs: aim (`nextAim`, `afterPrepare`).
        case running
    }

    /// How to join `group`; `startPending`: a barrier of its item is preparing (no instant chosen yet).
    public static func join(_ group: GroupState, startPending: Bool) -> Join {
        if group.isPlaying, group.anchorClock == nil, startPending { return .afterTheStart }
        return joinsPaused(group) ? .paused : .running
    }

    /// Where to prepare next: the group's media time `lead` from `now`; nil when the attempts are used up.
    public mutating func nextAim(group: GroupState, now: ClockTime) -> ClockTime? {
        guard attempts < Self.maximumAttempts else { return nil }
        attempts += 1
        return group.mediaTime(at: now + ClockTime(lead))
    }

    public enum Step: Sendable, Equatable {
        /// Start: render the prepared media time at this clock time.
        case start(at: ClockTime)
        /// Aim again (`nextAim`): the group moved, or the instant is too close or past.
        case aimAgain
    }

    /// The participant is prepared at `media`, aimed at when the group was `aimedAt`; `group` is the group now;
    /// `took`: how long that preparation took, when measured (the next aims count on it: a reloaded HLS view's
    /// last preparation before its server went away said 0.1 s, and each aim then took 1–1.5 s).
    public mutating func afterPrepare(at media: ClockTime, aimedAt: GroupState, group: GroupState?,
                                      now: ClockTime, took: Duration? = nil) -> Step {
        if let took { expectedPrepare = took }
        // The group moved (a command) while it prepared: aim at the new timeline, as far as the measure says.
        guard let group, group == aimedAt, let startAt = group.clockTime(forMedia: media) else {
            lead = Self.lead(forPrepare: expectedPrepare, misses: misses)
            return .aimAgain
        }
        guard startAt > now + ClockTime(Self.minimumStartLead) else {
            missed()
            return .aimAgain
        }
        return .start(at: startAt)
    }

    /// "Play at" arrived after the instant: a miss like preparing too long.
    public mutating func missedStart() { missed() }

    private mutating func missed() {
        misses += 1
        lead = Self.lead(forPrepare: expectedPrepare, misses: misses)
    }
}

/// `playImmediately`: the proposer starts as soon as it can; its start becomes the group's anchor. Its start
/// instant is `lead` ahead of the moment it is ready, 15 ms at first, three times as far after each miss (a loaded
/// machine), for up to four instants. A value the medium steps through.
public struct ImmediateStartPlanner: Sendable, Equatable {
    public static let maximumAttempts = 4
    public private(set) var lead: Duration = .milliseconds(15)
    public private(set) var attempts = 0

    public init() {}

    /// The next start instant for a participant ready at `now`; nil when attempts are used up.
    public mutating func nextInstant(now: ClockTime) -> ClockTime? {
        guard attempts < Self.maximumAttempts else { return nil }
        attempts += 1
        return now + ClockTime(lead)
    }

    /// The instant was missed: aim further ahead (still prepared, nothing rendered).
    public mutating func missedStart() { lead = lead * 3 }
}
