import GStreamer
import Synchronization

/// The barrier: everyone prepares, one start instant for all; and `playImmediately`'s start.
extension PlaybackCoordinationMedium {
    /// One participant's answer to "prepare": how long it took, or why it was not ready.
    struct Prepared: Sendable {
        var id: ParticipantID
        /// How long it took as the medium measured it (a remote participant's includes the network).
        var outcome: Result<Duration, CoordinationError>
        /// How long preparing took where it ran, when the participant says (`PlaybackCoordinator.targetPreparation`).
        var own: Duration?
        var took: Duration? { try? outcome.get() }
    }

    /// Everyone eligible prepares (seek + preroll, shown as "waiting for coordinated playback"); when all are
    /// ready, one start instant a little in the future (`StartMarginPolicy`); every pipeline's base time is set
    /// from it. The last participant to be ready starts the group from its own thread (`StartBarrier`); the
    /// medium does it only when that could not happen. The wait for readiness is bounded (`ReadinessPolicy`): a
    /// participant not ready when it ends is left behind — skipped by the group's commands until the medium has
    /// caught it up — and named: throws `participantNotReady` for the first one (the others have started without
    /// it).
    func runBarrier(item: String, target: GroupState, originator: ParticipantID?) async throws {
        let generation = bump(item)
        // Not those catching up: the barrier would wait for their preparation behind the catch-up's own, start
        // them, and the catch-up would seek them away again (`catchUpAlone`).
        let ids = roster.eligible(for: item).filter { !catchingUp.contains($0) }
        roster.setReady(ids, false)
        if target.isPlaying, let prediction = startPrediction, let expected = predictedPreparation(ids, prediction) {
            return try await runPredictedStart(item: item, target: target, originator: originator, ids: ids,
                                               generation: generation, prediction: prediction, expected: expected)
        }
        groups[item] = target   // paused-at-target while preparing: late joiners aim at it
        let command = DelegatedCommand(kind: .buffer(itemTime: target.anchorMedia, rate: target.rate),
                                       expectedItemIdentifier: item, originator: originator)
        let margin = marginPolicy.margin(participants: ids.count)
        let barrier = StartBarrier(expecting: ids, clock: pipelineTime, margin: margin, fires: target.isPlaying)
        startBarriers[item] = barrier
        let results: [Prepared]
        do {
            results = try await prepareAll(ids, command: command, barrier: barrier)
        } catch {
            barrier.cancel()
            if startBarriers[item] === barrier { startBarriers[item] = nil }
            startSettled(item)
            throw error
        }
        let (fired, preparedStarts) = barrier.cancel()
        if startBarriers[item] === barrier { startBarriers[item] = nil }
        // Joiners waiting for this start resume once this call suspends, by when the group's state below (its
        // instant, or paused) is set: nothing from here to there awaits.
        startSettled(item)
        guard generations[item] == generation else { throw CoordinationError.superseded }
        let notReady = results.filter { $0.took == nil }.map(\.id).sorted()
        roster.leaveBehind(notReady)
        var ready: [ParticipantID] = []
        for result in results {
            guard let took = result.took else { continue }
            roster[result.id]?.isReady = true
            roster.notePreparation(result.id, own: result.own ?? took, lastPrepare: took, byCatchUp: false)
            ready.append(result.id)
        }
        ready.sort()
        var state = target
        if target.isPlaying {
            // Not fired (someone had no prepared start, or was not ready): the medium runs the prepared starts
            // that did arrive itself, the same way. "Play at C" then still goes to every participant below: it
            // finds its start done and updates the participant's own state; one without a prepared start (a
            // delegate) starts there, or is caught up.
            let direct = ready.compactMap { preparedStarts[$0] }
            let fanout = stopwatch(on: waitClock)
            let started = fired ?? StartBarrier.startAll(direct, clock: pipelineTime, margin: margin)
            let start = started.start
            lastBarrierTiming = BarrierTiming(generation: generation,
                                              slowestPrepare: results.compactMap(\.took).max() ?? .zero,
                                              startMargin: margin,
                                              startLead: fired == nil && direct.isEmpty ? nil : started.lead,
                                              startedByLastReady: fired != nil)
            state.anchorClock = start
            groups[item] = state
            let play = DelegatedCommand(kind: .play(itemTime: state.anchorMedia, rate: state.rate, atClockTime: start),
                                        expectedItemIdentifier: item, originator: originator)
            let late = await tellToStart(ready, play, at: start)
            if lastBarrierTiming?.generation == generation {
                lastBarrierTiming?.startFanout = fanout()
                lastBarrierTiming?.missedStart = late.count
            }
            marginPolicy.recordStart(missed: late.count)
            // A participant that missed the instant is put on the group's timeline properly (prepare ahead, start
            // exactly on time).
            for id in late.sorted() where generations[item] == generation {
                do { try await catchUp(id) } catch { await leaveBehind([id]) }
            }
        } else {
            groups[item] = state
            let pause = DelegatedCommand(kind: .pause(itemTime: state.anchorMedia), expectedItemIdentifier: item,
                                         originator: originator)
            for id in ready {
                // A participant that cannot pause is not the group's failure: it shows its own error.
                try? await coordinators[id]?.perform(pause)
            }
        }
        await leaveBehind(notReady)
        await broadcastParticipants()
        for result in results {
            if case .failure(let error) = result.outcome { throw error }
        }
    }

    /// A barrier with a predicted instant (`StartPrediction`, set while members across a network take part): the
    /// instant is chosen now, from the slowest participant's expected preparation, and goes out with "prepare" —
    /// each participant prepares and starts at it without waiting to be told (`prepareThenStart`), so a member's
    /// "ready" no longer has to travel back before "start at C" can travel out. The group is on the new timeline
    /// from now on (late joiners aim at the instant). A participant ready only after the instant is caught up
    /// (prepared ahead and started exactly on the group's time), as a participant that missed a barrier's instant
    /// is; the prediction's extra grows after such a miss. One not ready when the readiness wait ends is left
    /// behind, as with the barrier.
    private func runPredictedStart(item: String, target: GroupState, originator: ParticipantID?, ids: [ParticipantID],
                                   generation: Int, prediction: StartPrediction, expected: Duration) async throws {
        let lead = prediction.lead(expectedPrepare: expected)
        var state = target
        let start = pipelineTime.time + ClockTime(lead)
        state.anchorClock = start
        groups[item] = state
        // Joiners waiting for a start being prepared have an instant to aim at now.
        startSettled(item)
        let prepare = DelegatedCommand(kind: .buffer(itemTime: target.anchorMedia, rate: target.rate),
                                       expectedItemIdentifier: item, originator: originator)
        let play = DelegatedCommand(kind: .play(itemTime: target.anchorMedia, rate: target.rate, atClockTime: start),
                                    expectedItemIdentifier: item, originator: originator)
        let missed = Mutex<Set<ParticipantID>>([])
        let results = try await prepareAll(ids) { id, coordinator in
            do {
                try await coordinator.prepareThenStart(prepare, play)
            } catch CoordinationError.missedStartInstant {
                missed.withLock { _ = $0.insert(id) }
            }
            return await coordinator.targetPreparation()
        }
        guard generations[item] == generation else { throw CoordinationError.superseded }
        let late = missed.withLock { $0 }
        let notReady = results.filter { $0.took == nil }.map(\.id).sorted()
        roster.leaveBehind(notReady)
        for result in results {
            guard let took = result.took else { continue }
            roster[result.id]?.isReady = !late.contains(result.id)
            // A local participant's whole call is its preparation (starting does not wait for the instant).
            roster.notePreparation(result.id, own: result.own ?? took, lastPrepare: nil, byCatchUp: false)
        }
        startPrediction?.recordStart(missed: late.count)
        lastBarrierTiming = BarrierTiming(generation: generation,
                                          slowestPrepare: results.compactMap { $0.own ?? $0.took }.max() ?? .zero,
                                          startMargin: lead, startLead: nil, startedByLastReady: false,
                                          startFanout: nil, missedStart: late.count, predicted: true)
        for id in late.sorted() where generations[item] == generation {
            do { try await catchUp(id) } catch { await leaveBehind([id]) }
        }
        await leaveBehind(notReady)
        await broadcastParticipants()
        for result in results {
            if case .failure(let error) = result.outcome { throw error }
        }
    }

    /// The preparation a predicted start of `ids` counts on, or nil when the barrier is expected to be quicker
    /// (`StartPrediction.beatsBarrier`). It counts on the slowest known own preparation; participants with none
    /// known yet are taken to be alike; with none known at all, on the medium's own measures (a remote
    /// participant's include the network).
    private func predictedPreparation(_ ids: [ParticipantID], _ prediction: StartPrediction) -> Duration? {
        let entries = ids.compactMap { roster[$0] }
        let measures = entries.compactMap { entry in
            entry.ownPrepare.map { (prepare: $0, fromCatchUp: entry.ownPrepareFromCatchUp) }
        }
        let expected = measures.map(\.prepare).max() ?? entries.map(\.lastPrepare).max() ?? GroupRoster.assumedPrepare
        let barrierPrepare = StartPrediction.barrierPreparation(measures) ?? expected
        return prediction.beatsBarrier(expectedPrepare: expected, barrierPrepare: barrierPrepare) ? expected : nil
    }

    /// Hands "play at `start`" to every ready participant; returns those that got it too late.
    ///
    /// A participant that got "play at C" only after C says so (missedStartInstant) and stays prepared instead of
    /// starting late. (Judging by when `perform` returned would also catch participants that did start in time and
    /// were merely slow to answer, and re-prepare them for nothing.)
    private func tellToStart(_ ready: [ParticipantID], _ play: DelegatedCommand,
                             at start: ClockTime) async -> [ParticipantID] {
        let starters = ready.compactMap { id in coordinators[id].map { (id, $0) } }
        let pipelineTime = self.pipelineTime
        return await withTaskGroup(of: ParticipantID?.self) { group in
            for (id, coordinator) in starters {
                group.addTask {
                    do {
                        try await coordinator.perform(play)
                        return nil
                    } catch CoordinationError.missedStartInstant {
                        return id
                    } catch {
                        // A target that cannot start is caught up like a late one (it gets prepared again).
                        return pipelineTime.time > start ? id : nil
                    }
                }
            }
            var late: [ParticipantID] = []
            for await id in group { if let id { late.append(id) } }
            return late
        }
    }

    /// playImmediately: the proposer prepares and starts as soon as it can; its start becomes the anchor. False
    /// when a newer command superseded it.
    func startImmediately(_ id: ParticipantID, state: GroupState, generation: Int) async throws -> Bool {
        guard let coordinator = coordinators[id] else { return false }
        let item = state.itemIdentifier
        try await coordinator.perform(DelegatedCommand(kind: .buffer(itemTime: state.anchorMedia, rate: state.rate),
                                                       expectedItemIdentifier: item, originator: id))
        var planner = ImmediateStartPlanner()
        while generations[item] == generation, let at = planner.nextInstant(now: pipelineTime.time) {
            var started = state
            started.anchorClock = at
            groups[item] = started
            roster[id]?.isReady = true
            do {
                try await coordinator.perform(DelegatedCommand(
                    kind: .play(itemTime: started.anchorMedia, rate: started.rate, atClockTime: at),
                    expectedItemIdentifier: item, originator: id))
                return true
            } catch CoordinationError.missedStartInstant {
                planner.missedStart()
            }
        }
        guard generations[item] == generation else { return false }
        throw CoordinationError.participantNotReady(id, .missedEveryStartInstant(attempts: planner.attempts))
    }
}
