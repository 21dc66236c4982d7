import GStreamer

/// Putting one participant on its group's timeline (late join, end of suspension, a missed start instant).
extension PlaybackCoordinationMedium {
    /// Prepares the participant at the media time the group will be at when it is ready, then starts it exactly
    /// when the group reaches that time; aims again when preparing took too long (`CatchUpPlanner`). A paused group
    /// is joined by preparing and pausing at its time.
    func catchUp(_ id: ParticipantID) async throws {
        guard let entry = roster[id], let coordinator = coordinators[id], let group = groups[entry.item] else { return }
        let item = entry.item
        roster[id]?.isReady = false
        if CatchUpPlanner.joinsPaused(group) {
            try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: group.anchorMedia, rate: group.rate),
                                                           expectedItemIdentifier: item, originator: nil))
            try await coordinator.perform(DelegatedCommand(kind: .pause(itemTime: group.anchorMedia),
                                                           expectedItemIdentifier: item, originator: nil))
            roster[id]?.isReady = true
            await coordinator.deliver(.joined(group))
            await broadcastParticipants()
            return
        }
        var planner = CatchUpPlanner(lastPrepare: entry.lastPrepare)
        while true {
            // The group stopped (a pause, a hold) while this participant was on its way: the barrier that did it
            // has told it where to be.
            guard let current = groups[item], current.isPlaying else { return }
            guard let media = planner.nextAim(group: current, now: pipelineTime.time) else {
                throw CoordinationError.participantNotReady(id, .couldNotCatchUp(attempts: planner.attempts))
            }
            let elapsed = stopwatch(on: waitClock)
            try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: media, rate: current.rate),
                                                           expectedItemIdentifier: item, originator: nil))
            roster[id]?.lastPrepare = elapsed()
            guard case .start(let startAt) = planner.afterPrepare(at: media, aimedAt: current, group: groups[item],
                                                                   now: pipelineTime.time) else { continue }
            do {
                try await coordinator.perform(DelegatedCommand(
                    kind: .play(itemTime: media, rate: current.rate, atClockTime: startAt),
                    expectedItemIdentifier: item, originator: nil))
            } catch CoordinationError.missedStartInstant {
                planner.missedStart()
                continue
            }
            roster[id]?.isReady = true
            await coordinator.deliver(.joined(current))
            await broadcastParticipants()
            return
        }
    }
}
