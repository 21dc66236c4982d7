import GStreamer

/// What one transport command does to a group: the state it moves to, how it starts, and what it changed (for
/// the events every participant is told).
public struct GroupCommandPlan: Sendable, Equatable {
    public enum Start: Sendable, Equatable {
        /// Everyone prepares; when all are ready, one start instant for all (see `StartBarrier`).
        case barrier
        /// The proposer starts as soon as it can; the others catch up like late joiners (`playImmediately`).
        case immediate
    }
    /// The group's state once the command is carried out; `anchorClock` is nil: the start instant is chosen when
    /// everyone is ready.
    public var target: GroupState
    public var start: Start
    /// The rate or playing/paused changed: everyone is told `rateChanged`.
    public var rateChanged: Bool
    /// The media time jumped (a seek): everyone is told `timeJumped`.
    public var jumped: Bool
}

/// Turns a participant's transport command into the group's next state, and says what each participant is told
/// afterwards. Pure: the medium supplies the group state, the proposer's position and the pipeline clock's time.
public enum GroupCommandPlanner {
    /// The group's state before a command: its own, or (no group yet) paused where the proposer is.
    public static func currentState(existing: GroupState?, item: String, proposerPosition: ClockTime?) -> GroupState {
        existing ?? GroupState(itemIdentifier: item, rate: 1.0, isPlaying: false, anchorMedia: proposerPosition ?? .zero,
                               anchorClock: nil)
    }

    /// The plan for `intent` on a group in state `current` at pipeline-clock time `now`. `held`: a participant is
    /// suspended for a reason others wait for, so the group stays paused whatever the command.
    public static func plan(_ intent: GroupIntent, current: GroupState, now: ClockTime, held: Bool) -> GroupCommandPlan {
        var target = current
        let here = current.mediaTime(at: now)
        target.anchorMedia = here
        target.anchorClock = nil
        var jumped = false
        var start = GroupCommandPlan.Start.barrier
        switch intent {
        case .play(let rate):
            target.isPlaying = true
            target.rate = rate
        case .pause:
            target.isPlaying = false
        case .seek(let time):
            target.anchorMedia = time
            jumped = true
        case .seekBy(let seconds):
            target.anchorMedia = ClockTime.seconds(max(0, here.seconds + seconds))
            jumped = true
        case .rate(let rate):
            target.rate = rate
            target.isPlaying = true
        case .playImmediately(let rate):
            target.isPlaying = true
            target.rate = rate
            start = .immediate
        }
        if held { target.isPlaying = false }
        // An immediate start always announces its rate: the proposer's start is the group's new anchor.
        let rateChanged = start == .immediate || target.rate != current.rate || target.isPlaying != current.isPlaying
        return GroupCommandPlan(target: target, start: start, rateChanged: rateChanged, jumped: jumped)
    }

    /// What each participant of the item's group is told once the command is carried out (`state`: the group's
    /// state then), in order; the originator hears it too, not marked as by another participant.
    public static func announcements(of plan: GroupCommandPlan, state: GroupState, originator: ParticipantID?,
                                     to participants: [ParticipantID]) -> [ParticipantID: [CoordinatorEvent]] {
        var told: [ParticipantID: [CoordinatorEvent]] = [:]
        for id in participants {
            let other = originator != nil && originator != id
            var events: [CoordinatorEvent] = []
            if plan.rateChanged {
                events.append(.rateChanged(rate: state.isPlaying ? state.rate : 0, originator: originator,
                                           byOtherParticipant: other))
            }
            if plan.jumped {
                events.append(.timeJumped(to: state.anchorMedia, originator: originator, byOtherParticipant: other))
            }
            if !events.isEmpty { told[id] = events }
        }
        return told
    }
}
