import GStreamer

/// Putting one participant on its group's timeline (late join, end of suspension, a missed start instant).
extension PlaybackCoordinationMedium {
    /// Prepares the participant at the media time the group will be at when it is ready, then starts it exactly
    /// when the group reaches that time; aims again when preparing took too long (`CatchUpPlanner`). A paused group
    /// is joined by preparing and pausing at its time; a group whose start a barrier is preparing, once that start
    /// has its instant (joined paused at the barrier's target, it stayed paused for good: the barrier starts only
    /// those it asked to prepare). True when it is on the group's timeline (one left behind takes part again);
    /// false when there was nothing to join.
    ///
    /// One catch-up per participant at a time: a request while one runs (a rejoin, the bring-back of one left
    /// behind, the end of a stall suspension, a missed instant — they come together after an outage) waits for it
    /// and shares its outcome. Two at once each sought the same pipeline to their own aim, so neither prepare was
    /// ever on time: HLS views back from a server outage aimed again and again for 6–16 s (soak, issue 15).
    @discardableResult
    func catchUp(_ id: ParticipantID) async throws -> Bool {
        if let running = catchUps[id] { return try await running.value }
        let task = Task { try await self.catchUpAlone(id) }
        catchUps[id] = task
        defer { catchUps[id] = nil }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    /// One participant onto its group's timeline, whatever the group does meanwhile. While it is on its way
    /// (`catchingUp`) the item's barriers leave it out: a command's barrier asked it to prepare as well, the
    /// player ran that preparation after the catch-up's own, the whole group waited for both, the barrier started
    /// it — and the catch-up, seeing the group moved, sought it away again to aim at the new timeline (soak,
    /// issue 15: HLS views "waiting for coordinated playback" 5–15 s after an outage, a command every ~4 s). Now
    /// the command goes on without it and the catch-up joins what the command made: paused, starting, or running.
    private func catchUpAlone(_ id: ParticipantID) async throws -> Bool {
        if let item = roster[id]?.item { await waitForPendingStart(item) }
        guard let entry = roster[id], coordinators[id] != nil, groups[entry.item] != nil else { return false }
        let item = entry.item
        roster[id]?.isReady = false
        catchingUp.insert(id)
        defer { catchingUp.remove(id) }
        var planner = CatchUpPlanner(lastPrepare: entry.lastPrepare)
        while true {
            // A command's barrier (which left this participant out) is preparing the group's start: its instant
            // is what to aim at.
            await waitForPendingStart(item)
            // Suspended meanwhile (its commands are ignored now: "prepared" and "started" would be lies that mark
            // it ready, and the end of the suspension would then find nothing to do), or moved to another item: its
            // own rejoin takes over.
            guard let member = roster[id], member.item == item, member.suspensions.isEmpty,
                  let coordinator = coordinators[id], let current = groups[item] else { return false }
            let aimedAt = pipelineTime.time, lead = planner.lead
            guard let media = planner.nextAim(group: current, now: aimedAt) else {
                throw CoordinationError.participantNotReady(id, .couldNotCatchUp(attempts: planner.attempts))
            }
            let paused = CatchUpPlanner.joinsPaused(current)
            let aim = recordAim(CatchUpAim(participant: id, aimedAt: aimedAt, lead: paused ? .zero : lead, media: media))
            let elapsed = stopwatch(on: waitClock)
            do {
                try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: media, rate: current.rate),
                                                               expectedItemIdentifier: item, originator: nil))
            } catch {
                settleAim(aim, took: nil, .failed)
                throw error
            }
            let took = elapsed()
            let own = await coordinator.targetPreparation()
            // Suspended while it prepared: the preparation may have been ignored, so it measured nothing.
            guard roster[id]?.suspensions.isEmpty ?? false else {
                settleAim(aim, took: nil, .failed)
                return false
            }
            // A catch-up prepares a pipeline that has prerolled (a joiner waits prerolled): a seek's measure.
            roster.notePreparation(id, own: own ?? took, lastPrepare: took, byCatchUp: true)
            if paused {
                try await coordinator.perform(DelegatedCommand(kind: .pause(itemTime: media),
                                                               expectedItemIdentifier: item, originator: nil))
                settleAim(aim, took: took, groups[item] == current ? .joinedPaused : .groupMoved)
                // A command moved the group while it prepared: join what it made.
                guard groups[item] == current else { continue }
                return await joined(id, current)
            }
            let now = pipelineTime.time
            let step = planner.afterPrepare(at: media, aimedAt: current, group: groups[item], now: now, took: took)
            guard case .start(let startAt) = step else {
                let startAt = groups[item] == current ? current.clockTime(forMedia: media) : nil
                settleAim(aim, took: took, startAt.map { .tooLate(by: .nanoseconds(Int64(now.nanoseconds) - Int64($0.nanoseconds))) } ?? .groupMoved)
                continue
            }
            do {
                try await coordinator.perform(DelegatedCommand(
                    kind: .play(itemTime: media, rate: current.rate, atClockTime: startAt),
                    expectedItemIdentifier: item, originator: nil))
            } catch CoordinationError.missedStartInstant {
                settleAim(aim, took: took, .missedStart)
                planner.missedStart()
                continue
            }
            settleAim(aim, took: took, .started(at: startAt))
            // A command that came while it was being started left it out: it plays the old timeline. Aim again.
            guard groups[item] == current else { continue }
            return await joined(id, current)
        }
    }

    /// The participant is on `group`'s timeline: from now on the item's barriers include it again (before any
    /// suspension point, so that no command can slip between and leave it on the old timeline), and it is told.
    private func joined(_ id: ParticipantID, _ group: GroupState) async -> Bool {
        catchingUp.remove(id)
        guard roster[id]?.suspensions.isEmpty ?? false else { return false }
        await caughtUp(id)
        await coordinators[id]?.deliver(.joined(group))
        await broadcastParticipants()
        return true
    }

    /// Keeps `aim` among the last aims (diagnostics); returns its index for `settleAim`.
    private func recordAim(_ aim: CatchUpAim) -> Int {
        if catchUpAims.count >= Self.keptCatchUpAims { catchUpAims.removeFirst(); catchUpAimsDropped += 1 }
        catchUpAims.append(aim)
        return catchUpAimsDropped + catchUpAims.count - 1
    }

    /// What came of the aim `recordAim` numbered `index` (nothing when it is no longer kept).
    private func settleAim(_ index: Int, took: Duration?, _ outcome: CatchUpAim.Outcome) {
        let position = index - catchUpAimsDropped
        guard catchUpAims.indices.contains(position) else { return }
        catchUpAims[position].took = took
        catchUpAims[position].outcome = outcome
    }

    /// Waits while a barrier prepares `item`'s start (the group is to play, no instant yet; `CatchUpPlanner.join`):
    /// woken whenever that barrier's preparation ends or a newer command replaces it, and looks again. A barrier's
    /// wait is bounded (`ReadinessPolicy`), so this is too.
    func waitForPendingStart(_ item: String) async {
        while let group = groups[item],
              CatchUpPlanner.join(group, startPending: startBarriers[item] != nil) == .afterTheStart {
            await withCheckedContinuation { startWaiters[item, default: []].append($0) }
        }
    }

    /// How many joiners wait for the start of `item`'s barrier being prepared (diagnostics; tests).
    public func joinersWaitingForStart(of item: String) -> Int { startWaiters[item]?.count ?? 0 }

    /// The item's barrier is no longer preparing (its instant is chosen, it failed, or a newer command replaced
    /// it): the joiners waiting for it look again.
    func startSettled(_ item: String) {
        for waiter in startWaiters.removeValue(forKey: item) ?? [] { waiter.resume() }
    }
}
