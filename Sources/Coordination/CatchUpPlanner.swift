import GStreamer

/// The schedule that puts one participant on a group's running timeline (a late joiner, the end of a suspension,
/// a participant that missed a start instant): it prepares at the media time the group will be at when it is
/// ready — aiming `lead` ahead of now, from its last measured preparation — then starts exactly when the group
/// reaches that time. If preparing took longer than aimed for (the group passed that time, or is about to), it
/// aims again twice as far ahead — and at least as far as the preparation it just measured needs (twice it plus
/// 80 ms); if the group moved meanwhile (a command), it aims again at the new timeline, as far as that measure says.
///
/// A value the medium steps through; all times are on the pipelines' clock. Pure: no I/O, no clock of its own.
public struct CatchUpPlanner: Sendable, Equatable {
    /// How many aims before giving up (`NotReadyReason.couldNotCatchUp`).
    public static let maximumAttempts = 6
    /// A start instant closer than this to now is not sent: "play at" would likely arrive after it.
    public static let minimumStartLead: Duration = .milliseconds(5)

    /// How far ahead of now the next aim is.
    public private(set) var lead: Duration
    public private(set) var attempts = 0

    /// `lastPrepare`: the participant's last measured seek+preroll; the first aim leaves twice that plus 80 ms.
    public init(lastPrepare: Duration) {
        lead = Self.lead(forPrepare: lastPrepare)
    }

    /// The lead a preparation that takes `prepare` needs: twice it (its time varies from one aim to the next)
    /// plus 80 ms for the answer and the start.
    public static func lead(forPrepare prepare: Duration) -> Duration { prepare * 2 + .milliseconds(80) }

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
    /// `took`: how long that preparation took, when measured. A reloaded HLS view's last preparation (before its
    /// server went away) said 0.1 s and each aim took 1–1.5 s: doubling alone missed four aims in a row.
    public mutating func afterPrepare(at media: ClockTime, aimedAt: GroupState, group: GroupState?,
                                      now: ClockTime, took: Duration? = nil) -> Step {
        let needed = took.map(Self.lead(forPrepare:)) ?? .zero
        // The group moved (a command) while it prepared: aim at the new timeline, no further ahead than needed.
        guard let group, group == aimedAt, let startAt = group.clockTime(forMedia: media) else {
            lead = max(lead, needed)
            return .aimAgain
        }
        guard startAt > now + ClockTime(Self.minimumStartLead) else {
            lead = max(lead * 2, needed)
            return .aimAgain
        }
        return .start(at: startAt)
    }

    /// "Play at" arrived after the instant: aim again, twice as far ahead.
    public mutating func missedStart() { lead = lead * 2 }
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
