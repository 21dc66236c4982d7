import GStreamer

/// Waiting for the pipeline: state changes and flushing seeks until they have settled, the ASYNC_DONE waiters,
/// refusals and timeouts, and the restart of a stalled first start. Runs on the player actor.
extension Player {

    func checkNotFailed() throws {
        if let failure { throw failure }
        if source == nil { throw PlayerError(view: view, cause: .noMediaLoaded) }
    }

    /// The one flushing seek every path uses (seek, rate change, coordinated prepare): the status shows
    /// "seeking" until the pipeline has prerolled at `position` (and `thenWait`, if given, is done).
    func flushingSeek(to position: ClockTime, rate: Double, flags: Element.SeekFlags, timeout: Duration,
                      thenWait: (() async throws -> Void)? = nil) async throws {
        withdrawPendingStart()
        completeCoordinatedStart()
        renderedMediaTime.reset()
        let losses = audio.replacements.losses
        apply(.seekStarted)
        defer { apply(.seekFinished) }
        do {
            try pipeline.seek(rate: rate, flags: flags, position: position)
        } catch {
            // A stalled first start (see `waitForSeekPreroll`) whose stalled stream never got as far as playsink
            // has no sink there to take a seek (the stalled sink is not even linked yet): the seek is begun again
            // from the source instead of refused, while the start is still pending.
            guard firstStartMayRestart && pipeline.isStateChangePending else {
                throw PlayerError(view: view, cause: .seekRefused(position: position, rate: rate))
            }
            restartStalledStart(at: position, rate: rate, flags: flags,
                                because: "its start had not prerolled when its seek to \(position) was refused")
        }
        // ASYNC_DONE (the prompt signal), then the element's own word that nothing is pending.
        try await waitForSeekPreroll(at: position, rate: rate, flags: flags, timeout: timeout)
        try await waitUntilSettled(timeout: timeout, lossesBefore: losses)
        try await thenWait?()
    }

    /// `untilSettled` false: returns once the change is requested (an asynchronous one is left pending, for a
    /// flushing seek that follows to complete).
    func changeState(to state: ElementState, timeout: Duration, untilSettled: Bool = true) async throws {
        withdrawPendingStart()
        completeCoordinatedStart()
        let losses = audio.replacements.losses
        apply(.changeState(to: state))
        // A dead daemon's stream is not played: it is replaced, and the replacement plays the view (the target
        // is PLAYING now), so the play is taken, not refused.
        if state == .playing && !pulseStreamIsCurrent() { return }
        let result: StateChangeResult
        do {
            result = try pipeline.setState(state)
        } catch {
            try await failRefusal(to: state, lossesBefore: losses)
        }
        if result == .async {
            guard untilSettled else { return }
            // Wait on the element's own state rather than on an ASYNC_DONE message: a PLAYING requested right
            // after a flushing seek may never post one (the seek's was already consumed).
            try await waitUntilSettled(timeout: timeout, lossesBefore: losses, restartingAStalledStart: true)
        } else {
            // Done at once: the status says so now, not when the bus message comes (read PAUSED after a play).
            apply(.settled(pipeline.currentState))
        }
        if let failure { throw failure }
        // Its stream is corked now: where its time stands is where the next start must find it (AudioClockGuard).
        if state == .paused { audio.clockGuard?.noteStopped() }
    }

    /// A refused state change: the bus carries the real cause, and the view fails with it when it is classified
    /// within `errorGrace`, else with the refusal — unless the loss of its PulseAudio stream explains the refusal
    /// (`audioOutputLossExplainsRefusal`: then only the operation ends, and the sink is replaced).
    fileprivate func failRefusal(to state: ElementState, lossesBefore losses: Int) async throws -> Never {
        let deadline = ContinuousClock.now + Player.errorGrace
        while failure == nil && !audioOutputLossExplainsRefusal(since: losses) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        if failure == nil && audioOutputLossExplainsRefusal(since: losses) { throw refusedForLostAudioOutput(state) }
        let error = failure ?? PlayerError(view: view, cause: .stateChangeFailed(to: state))
        fail(error)
        throw error
    }

    /// Waits until no asynchronous state change is pending (answered by the pipeline itself, in 5 ms steps).
    /// After an ASYNC_DONE this also guards against a stale one (left over from an earlier preroll) having
    /// woken us before the current seek had really prerolled.
    /// `restartingAStalledStart`: a state change (not a seek) may restart the view's first start when it stalled
    /// (`restartStalledStart`).
    fileprivate func waitUntilSettled(timeout: Duration, lossesBefore losses: Int,
                                      restartingAStalledStart: Bool = false) async throws {
        let start = ContinuousClock.now, deadline = start + timeout
        var nextTaskReading = start
        while pipeline.isStateChangePending {
            if let failure { throw failure }
            let now = ContinuousClock.now
            if now > deadline { throw prerollTimeout(timeout) }
            if restartingAStalledStart && startStalled() {
                if now - start > StartStall.limit {
                    restartStalledStart()
                } else if now >= nextTaskReading {
                    // The sooner sign (StartStall): read every 100 ms, not at each 5 ms poll.
                    nextTaskReading = now + .milliseconds(100)
                    let stopped = pipeline.pausedStreamingTasks(excluding: ["typefind"])
                    if startStall.noteStoppedTasks(stopped, at: now) {
                        let tasks = stopped.count == 1 ? "task" : "tasks"
                        restartStalledStart(because: "its streaming \(tasks) \(stopped.joined(separator: ", ")) stopped "
                                                + "and nothing came out of the media within \(StartStall.stoppedTaskLimit)")
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        startStall.settled()
        if pipeline.stateChangeFailed {
            // The change failed; the error message that says why is still on its way over the bus (the actor
            // handles it in order).
            try await failRefusal(to: machine.target, lossesBefore: losses)
        }
        if let failure { throw failure }
        // The bus message saying so may still be on its way: take the state from the pipeline now.
        apply(.settled(pipeline.currentState))
    }

    /// A seek's ASYNC_DONE. A coordinated preparation is a view's first start too: its PAUSED gives up after
    /// `pauseBeforeSeekLimit` and its seek follows. When that start stalled, the seek from the sinks did not bring
    /// the preroll: the by-ear control's first view waited the whole 20 s with its video sink still without a
    /// first buffer (1 of 3 runs of the serial tests under four busy loops). So, on a local file's first start, a
    /// sink still waiting `StartStall.limit` into the seek restarts the start there, at the seek's own target.
    fileprivate func waitForSeekPreroll(at position: ClockTime, rate: Double, flags: Element.SeekFlags,
                                        timeout: Duration) async throws {
        // (Not after a restart that took a refused seek's place: `mayRestart` is false then.)
        guard timeout > StartStall.limit && firstStartMayRestart else {
            return try await waitForAsyncDoneMessage(timeout: timeout)
        }
        let began = ContinuousClock.now
        do {
            try await waitForAsyncDoneMessage(timeout: StartStall.limit)
        } catch let error as PlayerError where failure == nil {
            guard case .timeout = error.cause else { throw error }
            let waiting = pipeline.sinksStillPrerolling()
            if startStall.mayRestart && !waiting.isEmpty {
                restartStalledStart(at: position, rate: rate, flags: flags,
                                    because: "nothing reached \(waiting.joined(separator: ", ")) within "
                                        + "\(StartStall.limit) of preparing it at \(position)")
            }
            try await waitForAsyncDoneMessage(timeout: timeout - (ContinuousClock.now - began))
        }
    }

    fileprivate func waitForAsyncDoneMessage(timeout: Duration) async throws {
        if let failure { throw failure }
        let ticket = asyncDoneWaiters.ticket()
        let timer = Task(executorPreference: executor) { [weak self] in
            try await Task.sleep(for: timeout)
            guard let self else { return }
            await self.expireWaiter(ticket.id, error: await self.prerollTimeout(timeout))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { asyncDoneWaiters.store($0, for: ticket, failure: failure) }
    }

    /// A local file's first start since its load, not restarted yet (`restartStalledStart`).
    fileprivate var firstStartMayRestart: Bool { startStall.mayRestart && source?.path != nil }

    /// Nothing reached a sink of a local file's first start within `StartStall.limit`, and it was not restarted yet.
    fileprivate func startStalled() -> Bool {
        firstStartMayRestart && renderedMediaTime.latest == nil
    }

    /// GStreamer 1.22's start-up stall (issue 13): in about one start in 200 on two loaded cores, the push of a
    /// local file's first buffer into decodebin3 returned FLUSHING (while decodebin3 added its other stream's
    /// input; which pad was flushing is not known); the source bin's queue and the demuxer paused their tasks on
    /// that FLUSHING and nothing ever moved again (every element PAUSED, playsink
    /// waiting for its first data, the preroll timing out after 20 s). A flushing seek to the start, sent into the
    /// source bin, restarts those tasks (taking the pipeline to NULL and up again is no cure: playsink, half
    /// configured, then aborts the process on pads it requested twice). Once per load, with a warning; a start
    /// that stalls again still times out. A seek's restart goes to the seek's target (`waitForSeekPreroll`).
    fileprivate func restartStalledStart(at position: ClockTime = .zero, rate: Double = 1,
                                         flags: Element.SeekFlags = [.flush, .accurate],
                                         because symptom: String? = nil) {
        startStall.restarted()
        let symptom = symptom ?? "nothing came out of the media within \(StartStall.limit) of starting"
        publish(.warning("\(view): \(symptom) (a GStreamer start-up stall); starting it again"))
        for source in pipeline.descendants(where: { $0.factoryName == "urisourcebin" }) {
            source.seekFromFirstSourcePad(rate: rate, flags: flags, position: position)
        }
    }

    /// A preroll that did not finish, naming the sinks still waiting for their first buffer (which branch is stuck).
    fileprivate func prerollTimeout(_ timeout: Duration) -> PlayerError {
        let waiting = pipeline.sinksStillPrerolling()
        let which = waiting.isEmpty ? "" : " (no first buffer yet at \(waiting.joined(separator: ", ")))"
        return PlayerError(view: view, cause: .timeout("no preroll after \(timeout)\(which)"))
    }

    fileprivate func expireWaiter(_ id: Int, error: Error) { asyncDoneWaiters.expire(id, error: error) }

    func resumeWaiters(with error: Error? = nil) { asyncDoneWaiters.wakeAll(with: error) }
}
