import GStreamer

/// The audio output supervisor's state (owned by the `Player` actor).
struct AudioOutputState {
    /// The PulseAudio stream was lost (server gone): audio goes to a fake sink until the server answers again.
    var outputLost = false
    /// Polls for the server's return after a loss.
    var reconnect: Task<Void, Never>?
    /// A new pulsesink is being brought up after a loss; an error from it means the server is not really back.
    var reconnecting = false
    /// Sink replacements and stream losses (pure bookkeeping, `AudioSinkReplacements`): one replacement owns the
    /// pipeline; a newer one (a loss during the last, its new stream failing at once) supersedes it.
    var replacements = AudioSinkReplacements()
    /// The task running the replacement in flight (cancelled when a newer one begins).
    var replacementTask: Task<Void, Never>?
    /// Audio sinks follow the pipeline's clock (the system clock or the group's): set at `load` (`useSystemClock`)
    /// or by `adoptClock`, reapplied to a replacement sink.
    var followsSharedClock = false
    /// The follower of the current PulseAudio sink (replaced with the sink).
    var clockFollower: AudioClockFollower?
    /// The server's playout for the current PulseAudio sink's follower (see `PulseTimingTap`; replaced with the sink).
    var timingTap: PulseTimingTap?
    /// The guard on the current PulseAudio sink's clock (see `AudioClockGuard`): armed before
    /// every start, since the follower can only work with a sink clock that libpulse has not wrecked.
    var clockGuard: AudioClockGuard?
    /// The current PulseAudio stream has never played: prime it before the next coordinated start (see
    /// `primeAudioStream`).
    var streamNeedsPriming = false
    /// Holds the video sink's input while the audio stream is primed.
    var primingVideoHold: PadProbe?
    /// The PulseAudio daemon the current pulsesink was made for (see `Player.pulseStreamIsCurrent`).
    var pulseServer: PulseServerInstance.Presence = .unknown
    /// Streams replaced because libpulse wrapped their time (`Player.audioStreamTimeWrapped`).
    var streamTimeWraps = 0
    /// Whether the view played (or was asked to) when its last coordinated sink replacement began.
    var playingBeforeReplacement = false
    /// The PulseAudio output's bin and parts, kept rather than looked up by name (see `AudioSinkBin`).
    var sinkBin: AudioSinkBin.Parts?
    /// Silences a coordinated view's audio until its follower has placed it (on the bin's volume, so one per bin,
    /// kept across output replacements; made by the first `followSharedClock`).
    var placementHold: AudioPlacementHold?
}

private struct AudioSinkReplacementSuperseded: Error {}

/// The audio output supervisor: PulseAudio loss and return (a fake sink meanwhile, a 1 s poll for the server),
/// the follower and guard that keep a coordinated view's PulseAudio stream on the shared clock, and the priming of
/// a fresh stream before its first coordinated start.
extension Player {
    /// The PulseAudio stream was lost (server stopped or restarted): the view plays on without sound.
    public var audioOutputLost: Bool { audio.outputLost }

    /// How the current audio sink's playout follows the pipeline's clock (corrections made, last skew), or nil
    /// when the view has no PulseAudio output.
    public var audioClockStatistics: AudioClockFollower.Statistics? { audio.clockFollower?.statistics }

    /// How the current PulseAudio sink's slaving reports were measured against the server's own playout (see
    /// `PulseTimingTap`), or nil without a tap.
    public var audioTimingTapStatistics: PulseTimingTap.Statistics? { audio.timingTap?.statistics }

    /// How often a view without its PulseAudio server asks whether the server is back.
    static let audioServerPollInterval: Duration = .seconds(1)

    /// Swaps the lost pulsesink for a fake sink at the same position and keeps going; a background task waits for
    /// PulseAudio and swaps the view's stream back in. Coordinated, the loss is an audio-session interruption: the
    /// coordinator suspends the view and, when its end is published, catches it up with the group.
    func audioOutputLost(_ reason: String) {
        guard case .pulse = configuration.audio, failure == nil else { return }
        let firstLoss = !audio.outputLost
        audio.outputLost = true
        audio.replacements.noteLoss()
        audio.reconnecting = false
        if firstLoss { publish(.audioOutput(lost: true, reason: reason)) }
        beginAudioSinkReplacement(pulse: false, at: positionWithoutAudio ?? .zero, resume: machine.target == .playing)
        audio.reconnect?.cancel()
        let clock = self.clock, device = configuredPulseDevice
        audio.reconnect = Task(executorPreference: executor) { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: Player.audioServerPollInterval) } catch { return }
                guard AudioOutput.pulseAudioTakesStreams(device: device) else { continue }
                await self?.audioServerBack()
                return
            }
        }
    }

    /// Whether the view may play its PulseAudio stream: true unless the daemon its pulsesink connected to is no
    /// longer the one that answers (killed, or killed and restarted). Then the stream is treated as lost now (a
    /// fake sink, a new stream once the daemon takes streams) and false is returned: a dead stream brought to
    /// PLAYING deadlocks GStreamer 1.22's pulsesink (see `PulseServerInstance`). A view without a pulsesink in
    /// its pipeline, or whose output is already being replaced, has nothing to check.
    func pulseStreamIsCurrent() -> Bool {
        guard case .pulse = configuration.audio, failure == nil, !audio.outputLost,
              audio.pulseServer != .unknown else { return true }
        let now = PulseServerInstance.probe()
        guard now != audio.pulseServer, now != .unknown else { return true }
        audioOutputLost(now == .unreachable ? "PulseAudio does not answer" : "PulseAudio restarted: the view's stream was on the old daemon")
        return false
    }

    /// Where the view is, asked of its video sink (a position query of the whole pipeline would ask the dead
    /// pulsesink too), else the last buffer a sink rendered. Not that buffer's time first: it is a timestamp, and
    /// an HLS stream's timestamps are offset from its position — the soak's HLS views, replacing their lost sink,
    /// seeked to 1:07 of 24 s media ("seek to 0:01:07.033 at rate 1.0 refused") and FAILED.
    private var positionWithoutAudio: ClockTime? {
        (try? pipeline.get("video-sink", as: Element.self))?.queryPosition() ?? renderedMediaTime.latest
    }

    /// The sink the view's streams go to (nil: the server's default).
    private var configuredPulseDevice: String? {
        if case .pulse(let device) = configuration.audio { return device }
        return nil
    }

    /// The server takes streams again: a new pulsesink replaces the fake one. Called by the poll `audioOutputLost`
    /// starts; internal so that a test can bring the stream back at a moment it chooses (`AudioReplacementRaceTests`).
    func audioServerBack() {
        guard audio.outputLost, failure == nil else { return }
        audio.reconnecting = true
        beginAudioSinkReplacement(pulse: true, at: self.position ?? renderedMediaTime.latest ?? .zero,
                                  resume: machine.target == .playing)
    }

    /// Starts replacing the audio sink (a fake sink, or a new pulsesink when `pulse`), superseding the replacement
    /// in flight if any: that one is cancelled and stops at its next step without failing the view, and this one
    /// keeps its position and intent (see `AudioSinkReplacements` for why).
    private func beginAudioSinkReplacement(pulse: Bool, at position: ClockTime, resume: Bool) {
        replacementTaskCancel()
        let job = audio.replacements.begin(position: position, resume: resume)
        // Runs on this actor once the caller's turn ends.
        audio.replacementTask = Task(executorPreference: executor) { [weak self] in
            await self?.replaceAudioSink(pulse: pulse, job)
        }
    }

    private func replacementTaskCancel() {
        audio.replacementTask?.cancel()
        audio.replacementTask = nil
    }

    /// Throws when a newer replacement took over (or this one was cancelled for it).
    private func checkOwner(_ job: AudioSinkReplacements.Job) throws {
        guard audio.replacements.owns(job), !Task.isCancelled else { throw AudioSinkReplacementSuperseded() }
    }

    private func replaceAudioSink(pulse: Bool, _ job: AudioSinkReplacements.Job) async {
        guard failure == nil, case .pulse(let device) = configuration.audio, audio.replacements.owns(job) else { return }
        // Every replacement is an interruption of its own when coordinated, begun here and ended below, so that
        // the coordinator suspends the view and rejoins the group when it ends. (Begun only at the loss, the
        // return's end found no suspension to end and the view stayed PAUSED: issue 15 row 3.) A superseded
        // replacement ends nothing: the newer one does.
        if interceptor != nil { publish(.interruption(began: true)) }
        do {
            guard var parts = audio.sinkBin else {
                throw PlayerError(view: view, cause: .output("the view has no audio sink bin to replace its output in"))
            }
            let server = pulse ? PulseServerInstance.probe() : .unknown
            let output = pulse ? try AudioSinkBin.makePulseStream(configuration, device: device, server: server)
                               : try AudioSinkBin.makeLostOutput()
            // The guard and follower belong to the output that leaves (the guard reads through a pointer to that
            // sink, freed with it: arming it for the next PLAYING crashed in libgstpulseaudio).
            audio.clockGuard?.markLost()
            audio.clockGuard = nil
            audio.clockFollower = nil
            // Only the bin's output changes: no source, demuxer or decoder task is stopped (see `AudioSinkBin`).
            let swapped = Result { try AudioSinkBin.replaceOutput(of: &parts, with: output) }
            audio.sinkBin = parts   // what the bin holds now, also when the swap failed halfway
            try swapped.get()
            audio.replacements.sinkReplaced()
            audio.pulseServer = server
            if pulse, audio.followsSharedClock { followSharedClock(output) }
            // Not waited for: the old output may have stopped the streams (its error went upstream), so the video
            // sink may have nothing to preroll until the flushing seek below starts them again.
            try await changeState(to: .paused, timeout: .seconds(20), untilSettled: false)
            try checkOwner(job)
            try AudioSinkBin.join(output)
            try await flushingSeek(to: job.position, rate: rate, flags: [.flush, .accurate], timeout: .seconds(20))
            try checkOwner(job)
            if interceptor != nil {
                // The coordinator rejoins the group (catch-up) when the interruption ends — unless the view stays
                // suspended for another reason; then it goes on as the replacement found it (see there).
                audio.playingBeforeReplacement = audio.replacements.resumes(orElse: job.resume)
                publish(.interruption(began: false))
            } else if audio.replacements.resumes(orElse: job.resume) {
                try await changeState(to: .playing, timeout: .seconds(20))
                try checkOwner(job)
            }
            _ = audio.replacements.end(job)
            if pulse {
                audio.reconnecting = false
                // A stream replaced for its wrapped time was never lost: nothing to announce as back.
                if audio.outputLost {
                    audio.outputLost = false
                    publish(.audioOutput(lost: false, reason: "PulseAudio answers again"))
                }
            }
        } catch {
            // Superseded (cancelled, or a newer replacement began while this one waited): not the view's failure.
            guard !(error is AudioSinkReplacementSuperseded), !(error is CancellationError),
                  audio.replacements.end(job) else { return }
            if let error = error as? PlayerError {
                fail(error)
            } else {
                fail(PlayerError(view: view, cause: .output("cannot replace the audio output: \(error)")))
            }
        }
    }

    /// libpulse wrapped the time of the stream `wrapped` guards (see `AudioClockGuard.onFirstAbsurdReading`): the
    /// view gets a new stream at its position, as after PulseAudio's return, before the wrapped one blocks its
    /// writes at the next pause and resume and freezes the video. A coordinated view is suspended meanwhile and
    /// caught up with the group (the replacement's interruption). Nothing to do when that stream has already left
    /// or another replacement is in flight (it brings a new stream too).
    ///
    /// Unlike a lost stream's replacement, this one waits for its turn in the command queue: the wrapped stream
    /// still plays, and wraps come at resumes and seeks, so a replacement that pre-empted would interleave its
    /// PAUSED and flushing seek with the user's seek in flight. The position is taken when its turn comes.
    func audioStreamTimeWrapped(_ wrapped: AudioClockGuard) {
        guard wrappedStreamIsStillToReplace(wrapped) else { return }
        audio.streamTimeWraps += 1
        publish(.audioStreamReplaced(reason: "PulseAudio's time for it jumped years ahead (libpulse wrapped it)"))
        Task(executorPreference: executor) { [weak self] in await self?.replaceWrappedStream(wrapped) }
    }

    private func replaceWrappedStream(_ wrapped: AudioClockGuard) async {
        try? await exclusively {
            // Checked again: a loss (its own replacement) or a stop may have come while this waited.
            guard wrappedStreamIsStillToReplace(wrapped) else { return }
            beginAudioSinkReplacement(pulse: true, at: positionWithoutAudio ?? position ?? .zero,
                                      resume: machine.target == .playing)
            await audio.replacementTask?.value
        }
    }

    /// The wrapped stream is still the view's PulseAudio stream, and nothing else (a failure, a loss, another
    /// replacement) has taken it out of the pipeline.
    private func wrappedStreamIsStillToReplace(_ wrapped: AudioClockGuard) -> Bool {
        guard case .pulse = configuration.audio else { return false }
        return audio.clockGuard === wrapped && failure == nil && !audio.outputLost && audio.replacements.current == nil
    }

    /// Streams replaced because libpulse wrapped their time (see `audioStreamTimeWrapped`).
    public var audioStreamTimeWraps: Int { audio.streamTimeWraps }

    /// Whether the view played (or was asked to) when its last sink replacement under a coordinator began: the
    /// replacement leaves a coordinated view PAUSED for the coordinator's catch-up, and a view that stays
    /// suspended for another reason (`whatHappened` playing it locally at 2×) must play on instead.
    /// Read once: answers for the replacement that ended last and forgets it (a later interruption's end, a cork
    /// by PulseAudio, has no replacement behind it).
    public func takePlayedBeforeAudioReplacement() -> Bool {
        defer { audio.playingBeforeReplacement = false }
        return audio.playingBeforeReplacement
    }

    /// Fault injection for tests and the soak: the current PulseAudio stream's time is reported `offset` ahead from
    /// now on, as libpulse's wrap does (see `AudioClockGuard.injectReadingOffset`). False without a guarded stream.
    public func injectAudioStreamTimeJump(_ offset: Duration) -> Bool {
        guard let clockGuard = audio.clockGuard else { return false }
        clockGuard.injectReadingOffset(offset)
        return true
    }

    /// Whether a state change refused since `losses` was read is the lost PulseAudio stream's doing (see
    /// `AudioSinkReplacements.explainsRefusal`). Such a refusal is not the view's failure: the supervisor replaces
    /// that sink (a fake one until the daemon answers, then a new stream) and the view goes on. Issue 15: after a
    /// PulseAudio kill, views FAILED with "cannot change state to PAUSED" — a group command's preparation (its
    /// PAUSED and flushing seek) on a pipeline whose pulsesink's stream had died: the sink's preroll failed on the
    /// dead stream, the state change with it, and the refusal failed the view.
    func audioOutputLossExplainsRefusal(since losses: Int) -> Bool {
        audio.replacements.explainsRefusal(since: losses)
    }

    /// What an operation throws when a lost PulseAudio stream refused its state change (the view does not fail;
    /// a coordinated view is suspended and caught up by the replacement, see `replaceAudioSink`).
    func refusedForLostAudioOutput(_ state: ElementState) -> PlayerError {
        PlayerError(view: view, cause: .output("the PulseAudio stream is lost: \(state) refused until the sink is replaced"))
    }

    /// The view's pulsesink (the current output of its audio sink bin), nil without PulseAudio output or while the
    /// stream is lost (the output is then the fake sink).
    func currentPulseSink() -> Element? { audio.sinkBin?.pulse }

    /// Makes `pulseSink` follow the shared clock through an `AudioClockFollower` (custom slaving; see there why
    /// not pulsesink's own skew slaving). The alternative, slave-method=resample, together with start-time NONE
    /// and an explicit base time froze pulsesink pipelines after ~2 s in our tests.
    func followSharedClock(_ pulseSink: Element) {
        try? pulseSink.set("provide-clock", false)
        let clockGuard = pulseSink.audioClockGuard
        audio.clockGuard = clockGuard
        clockGuard?.onFirstAbsurdReading { [weak self, weak clockGuard] in
            guard let clockGuard else { return }
            Task { await self?.audioStreamTimeWrapped(clockGuard) }
        }
        let onGroupClock = coordinated.clock != nil
        let tap = configuration.audioPlayoutTiming == .server ? PulseTimingTap.make(for: pulseSink) : nil
        audio.timingTap = tap
        // On a group's clock the audio is held until placed; reports from libpulse's smoother only (no tap) need the
        // longer warm-up there (see `Settings.onGroupClock`).
        let follower = AudioClockFollower(settings: onGroupClock && tap == nil ? .onGroupClock : .init())
        let hold = audioPlacementHold()
        hold?.engage(onGroupClock)
        do {
            try pulseSink.setCustomAudioSlaving { observation in
                let correction = follower.observe(tap?.correct(observation) ?? observation)
                hold?.report(placed: follower.isPlaced)
                return correction
            }
            audio.clockFollower = follower
            audio.streamNeedsPriming = true
        } catch {
            // Not an audio base sink (cannot happen with pulsesink): fall back to the sink's own skew slaving.
            try? pulseSink.set("slave-method", fromString: "skew")
            audio.clockFollower = nil
        }
    }

    /// The view's `AudioPlacementHold`, made on first use for its audio sink bin's volume (nil without a bin).
    private func audioPlacementHold() -> AudioPlacementHold? {
        if let hold = audio.placementHold { return hold }
        guard let volume = audio.sinkBin?.primer else { return nil }
        let hold = AudioPlacementHold { silent in
            try? volume.set("volume", silent ? AudioPlacementHold.heldGain : 1.0)
        }
        audio.placementHold = hold
        return hold
    }

    /// How often this view's audio was held until placed, and whether it is now (see `AudioPlacementHold`).
    public var audioPlacementHoldStatistics: AudioPlacementHold.Statistics? { audio.placementHold?.statistics }

    /// How long a fresh stream plays (silently) before its first coordinated start. 200 ms and 600 ms measured
    /// alike in the by-ear test.
    static let audioPrimingDuration: Duration = .milliseconds(200)

    /// Plays a paused pipeline whose PulseAudio stream has never played for a moment, silent and with its video
    /// held back, then pauses it again (the caller's flushing seek follows).
    ///
    /// Why: a stream's first coordinated start was heard anywhere from 0 to 106 ms off the clock (the by-ear
    /// test, 6 of 9 runs more than 2 ms off), while every start after the stream had once played landed within
    /// 1 ms — PulseAudio renegotiates the sink's latency when a new stream first plays, and neither the sink's
    /// clock nor `AudioClockFollower` can see where that leaves the stream's samples. Costs ~0.25 s once per
    /// stream (first start, late join, a sink replaced after PulseAudio came back), while the view waits anyway.
    func primeAudioStream(timeout: Duration) async throws {
        audio.streamNeedsPriming = false
        guard let clock = coordinated.clock, let parts = audio.sinkBin, parts.pulse != nil else { return }
        let silencer = parts.primer
        // Silent samples, not a muted stream: a mute round trip on the server broke module-role-cork's corking
        // (the audioSessionInterrupted suspension) in our tests, and a volume round trip lost the volume.
        try? silencer.set("mute", true)
        // The video sink's input is blocked while priming (not dropped: the decoder would race ahead unsynced),
        // so the grid keeps showing the prepared frame.
        let video = try? pipeline.get("video-sink", as: Element.self)
        audio.primingVideoHold = (try? video?.staticPad("sink"))?.addProbe([.buffer, .blocking]) { _ in .ok }
        defer {
            audio.primingVideoHold = nil   // releasing the token removes the probe
            try? silencer.set("mute", false)
        }
        pipeline.baseTime = clock.time - (pipeline.queryLatency()?.minimum ?? .zero)
        try await changeState(to: .playing, timeout: timeout)
        try await Task.sleep(for: Player.audioPrimingDuration)
        // Let frames through again before pausing: the video sink must preroll one to reach PAUSED (the
        // caller's flushing seek replaces it at once).
        audio.primingVideoHold = nil
        try await changeState(to: .paused, timeout: timeout)
    }
}
