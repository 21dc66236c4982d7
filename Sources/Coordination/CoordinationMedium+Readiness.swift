import GStreamer

/// The bounded wait for readiness, and participants left behind (Apple's semantics: a participant that cannot keep
/// up is suspended, the group is not held). The decisions are `ReadinessPolicy`'s; this is the I/O.
extension PlaybackCoordinationMedium {
    /// Asks every participant to prepare, each handing its prepared start to the barrier the moment it is ready,
    /// and waits for their answers while `readiness` says to (see `prepareAll(_:_:)`).
    func prepareAll(_ ids: [ParticipantID], command: DelegatedCommand, barrier: StartBarrier) async throws -> [Prepared] {
        try await prepareAll(ids) { id, coordinator in
            try await coordinator.prepare(command) { barrier.arrive(id, start: $0) }
            return await coordinator.targetPreparation()
        }
    }

    /// Runs `preparation` for every participant (it returns the participant's own measure of its preparation, when
    /// it has one) and waits for their answers while `readiness` says to. Participants still preparing when the
    /// wait ends are answered `timedOut(after:)` and their preparation is cancelled, without waiting for it to
    /// end: a pipeline that never prerolls must not hold the group. Throws `CancellationError` when the command
    /// itself was cancelled (then nobody is left behind).
    func prepareAll(_ ids: [ParticipantID],
                    _ preparation: @escaping @Sendable (ParticipantID, PlaybackCoordinator) async throws -> Duration?)
        async throws -> [Prepared] {
        let policy = readiness
        let waitClock = self.waitClock
        let elapsed = stopwatch(on: waitClock)
        // An answer, or nil: a deadline to look at.
        let (events, sink) = AsyncStream<Prepared?>.makeStream()
        defer { sink.finish() }
        var preparations: [ParticipantID: Task<Void, Never>] = [:]
        for id in ids {
            guard let coordinator = coordinators[id] else { continue }
            preparations[id] = Task.detached {
                let took = stopwatch(on: waitClock)
                do {
                    let own = try await preparation(id, coordinator)
                    sink.yield(Prepared(id: id, outcome: .success(took()), own: own))
                } catch {
                    sink.yield(Prepared(id: id, outcome: .failure(.participantNotReady(id, .failed(TargetFailure(error))))))
                }
            }
        }
        var answers: [ParticipantID: Prepared] = [:]
        var readyAfter: [Duration] = []
        var alarmTask: Task<Void, Never>?
        /// Wakes the loop below when the deadline (as it is now) comes.
        func setAlarm() {
            alarmTask?.cancel()
            let remaining = policy.deadline(readyAfter: readyAfter) - elapsed()
            let ring = remaining > .zero ? alarm(on: waitClock, after: remaining) : nil
            alarmTask = Task.detached {
                try? await ring?()
                sink.yield(nil)
            }
        }
        guard !preparations.isEmpty else { return [] }
        setAlarm()
        await withTaskCancellationHandler {
            for await answer in events {
                if let answer {
                    answers[answer.id] = answer
                    if answer.took != nil { readyAfter.append(elapsed()) }
                    if answers.count == preparations.count { break }
                    setAlarm()
                }
                if policy.stopsWaiting(expecting: preparations.count, readyAfter: readyAfter, elapsed: elapsed()) { break }
            }
        } onCancel: {
            sink.finish()
        }
        alarmTask?.cancel()
        // To the millisecond: the error names it ("not ready within 4.0 seconds", not 4.000084006).
        let waited = Duration.milliseconds(Int64((elapsed() / .milliseconds(1)).rounded()))
        let cancelled = Task.isCancelled
        for (id, preparation) in preparations where answers[id] == nil {
            preparation.cancel()
            answers[id] = Prepared(id: id, outcome: .failure(.participantNotReady(id, .timedOut(after: waited))))
        }
        if cancelled { throw CancellationError() }
        return ids.compactMap { answers[$0] }
    }

    /// Leaves participants behind: skipped by the group's commands (`GroupRoster.eligible`), told so
    /// (`suspensionBegan(.coordinatedPlaybackNotPossible)`), and brought back by the medium: it tries to catch each
    /// up with its group, with pauses growing between attempts (`ReadinessPolicy.retryDelay`), until it is on the
    /// group's timeline, rejoins on its own (a suspension of its own ends with a rejoin) or leaves. The task holds
    /// the medium weakly, so a participant that never gets ready keeps nothing alive.
    func leaveBehind(_ ids: [ParticipantID]) async {
        roster.leaveBehind(ids)
        let clock = waitClock, policy = readiness
        for id in ids {
            guard bringBackTasks[id] == nil, let coordinator = coordinators[id] else { continue }
            await coordinator.deliver(.suspensionBegan(.coordinatedPlaybackNotPossible))
            bringBackTasks[id] = Task { [weak self] in
                var failed = 0
                while !Task.isCancelled {
                    do { try await clock.sleep(for: policy.retryDelay(afterFailedAttempts: failed)) } catch { break }
                    guard let medium = self, let caughtUp = await medium.tryBringingBack(id), !caughtUp else { break }
                    failed += 1
                }
                await self?.bringBackEnded(id)
            }
        }
    }

    /// One attempt to catch a participant left behind up: true when it is on the group's timeline, false when the
    /// attempt failed, nil when there is nothing to do any more (caught up meanwhile, gone, or suspended on its
    /// own: its suspension's end rejoins it).
    private func tryBringingBack(_ id: ParticipantID) async -> Bool? {
        guard let entry = roster[id], entry.leftBehind, entry.suspensions.isEmpty else { return nil }
        do {
            return try await catchUp(id)
        } catch {
            return false
        }
    }

    private func bringBackEnded(_ id: ParticipantID) { bringBackTasks[id] = nil }

    /// A participant left behind is on its group's timeline again: it takes part from now on, and is told so.
    func caughtUp(_ id: ParticipantID) async {
        let wasLeftBehind = roster[id]?.leftBehind ?? false
        roster.caughtUp(id)
        if wasLeftBehind { await coordinators[id]?.deliver(.suspensionEnded(.coordinatedPlaybackNotPossible)) }
    }
}
