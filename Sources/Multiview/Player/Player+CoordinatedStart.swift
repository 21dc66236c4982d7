import Foundation
import GStreamer

/// The coordinated start's state (owned by the `Player` actor).
struct CoordinatedStartState {
    /// The clock adopted from a coordination medium (nil when uncoordinated).
    var clock: Clock?
    /// The start made at the end of `prepareCoordinated`, run by the medium or by the next `startCoordinated`;
    /// withdrawn when anything else changes the pipeline first.
    var pendingStart: PreparedSinkStart?
    /// Where the time of the last few preparations went, oldest first (diagnostics).
    var preparations: [CoordinatedPreparationTiming] = []
    /// When the current preparation's flushing seek had prerolled.
    var seekDone: ContinuousClock.Instant?
}

/// Where one coordinated preparation's time went: the wait for PAUSED, the flushing seek to its preroll, the wait
/// for a full buffer (a network view). Kept for diagnostics: a catch-up's aims depend on how long this takes.
public struct CoordinatedPreparationTiming: Sendable, Equatable, CustomStringConvertible {
    public var target: ClockTime
    public var pause: Duration
    public var seek: Duration
    public var buffering: Duration
    public var total: Duration { pause + seek + buffering }
    public var description: String {
        "at \(target): " + String(format: "%.3f s (PAUSED %.3f s, seek %.3f s, buffer %.3f s)", total.inSeconds,
                                  pause.inSeconds, seek.inSeconds, buffering.inSeconds)
    }
}

/// The coordination primitives (used by the coordination layer; they never go through the interceptor):
/// adopting the shared clock, prepare → start at an instant → complete, and withdrawing a prepared start that
/// something else overtook. The start itself is `PreparedSinkStart`, run without the actor from the start
/// barrier's real-time section; this side only keeps the player's bookkeeping in step with it.
extension Player {
    /// Installs (or removes) the object that intercepts this player's transport commands. Held weakly: the
    /// coordinator owns the player, not the other way round.
    public func setTransportInterceptor(_ interceptor: (any TransportInterceptor)?) {
        self.interceptor = interceptor
    }

    /// Runs the pipeline on `clock` and stops it from choosing its own base time (start-time NONE), so the
    /// coordinator's base time is kept across PAUSED→PLAYING. Audio sinks then follow that clock (skew
    /// correction) rather than providing their own.
    public func adoptClock(_ clock: Clock) {
        coordinated.clock = clock
        pipeline.useClock(clock)
        pipeline.startTime = nil
        audio.followsSharedClock = true
        if let sink = currentPulseSink() { followSharedClock(sink) }
    }

    /// Local timing while detached from the group (a suspension): the pipeline picks its own base time again at
    /// each PLAYING and after each flushing seek, so local seeks and rate changes play at normal speed. (With
    /// start-time NONE a local flushing seek would keep the group's old base time and every frame would be late.)
    /// The next `startCoordinated` puts the group's timing back.
    public func useLocalTiming() {
        pipeline.startTime = .zero
    }

    /// Goes back to an uncoordinated pipeline: the system clock (every view's clock, see `useSystemClock`), base
    /// time chosen at each PLAYING. The audio keeps following that clock.
    public func releaseClock() {
        coordinated.clock = nil
        pipeline.useClock(Clock.systemClock())
        pipeline.startTime = .zero
        audio.placementHold?.engage(false)   // heard at once from now on: no group to be placed against
        apply(.coordinatedWaiting(false))
    }

    /// The clock model of every view, coordinated or not: the pipeline runs on the system clock and its
    /// PulseAudio playout follows it (`followSharedClock`), never the other way round.
    ///
    /// Why: with pulsesink as the pipeline's clock (GStreamer's default), whatever PulseAudio does to the stream
    /// stops the video with it. An idle null sink has up to 2 s rendered ahead; a stream that is new on it (a
    /// view's first start, or a move there: the routing arbiter's swap) waits behind that, and pulsesink's clock
    /// first ran ahead, then stood still ~1.8 s: the view showed BUFFERING 0% and a moved view stayed behind the
    /// others for good (bare gst-play-1.0 stalls the same way). On the system clock the video never waits for
    /// the server; the follower places the audio on it. Called by `load`, before the pipeline first leaves NULL;
    /// `adoptClock` replaces the clock with the group's.
    func useSystemClock() {
        guard coordinated.clock == nil else { return }
        pipeline.useClock(Clock.systemClock())
        guard !audio.followsSharedClock else { return }
        audio.followsSharedClock = true
        if let sink = currentPulseSink() { followSharedClock(sink) }
    }

    /// Shows "waiting to play — waiting for coordinated playback" (or clears it).
    public func setWaitingForCoordinatedPlayback(_ waiting: Bool) {
        apply(.coordinatedWaiting(waiting))
    }

    /// Prepares a coordinated start: PAUSED, then a flushing accurate seek to `time` at `rate`, prerolled.
    /// Afterwards the first frame (media time `time`) has running time 0, so `startCoordinated(at:)` can
    /// place it on the shared clock exactly. `whenPrepared` gets the prepared start (`preparedStart`) on this
    /// actor as soon as it exists, before this call returns.
    public func prepareCoordinated(at time: ClockTime, rate newRate: Double, timeout: Duration = .seconds(20),
                                   whenPrepared: (@Sendable (PreparedSinkStart?) -> Void)? = nil) async throws {
        try await exclusively {
            try await prepareCoordinatedNow(at: time, rate: newRate, timeout: timeout, whenPrepared: whenPrepared)
        }
    }

    private func prepareCoordinatedNow(at time: ClockTime, rate newRate: Double, timeout: Duration,
                                       whenPrepared: (@Sendable (PreparedSinkStart?) -> Void)?) async throws {
        try checkNotFailed()
        withdrawPendingStart()
        // Prepared here, started by the group: a dead daemon's stream must not get that far (`PulseServerInstance`).
        guard pulseStreamIsCurrent() else { throw refusedForLostAudioOutput(.playing) }
        apply(.coordinatedWaiting(true))
        let began = ContinuousClock.now
        coordinated.seekDone = nil
        // PAUSED first, then the seek: seeking while the PLAYING→PAUSED change is still pending can lose the
        // seek under load (the view then keeps its own position). But a view whose data stopped behind a blocked
        // output cannot preroll where it is: its audio sink stopped consuming (a PulseAudio stream that did not
        // play for seconds: the soak's added view), the audio queues filled, the demuxer blocked on them and the
        // video queue ran dry, so PAUSED waits for a video frame that only a flush brings. That wait was the
        // soak's view frozen for good ("waiting for coordinated playback", every later preparation the same), so
        // it is bounded: past it, the flushing seek below brings the preroll itself.
        if machine.current != .paused || machine.target != .paused {
            do {
                try await changeState(to: .paused, timeout: min(timeout, Player.pauseBeforeSeekLimit))
            } catch let error as PlayerError where failure == nil && pipeline.isStateChangePending {
                guard case .timeout = error.cause else { throw error }
            }
        }
        if audio.streamNeedsPriming { try await primeAudioStream(timeout: timeout) }
        let paused = ContinuousClock.now
        var target = time
        if let duration, target >= duration { target = duration - .milliseconds(40) }
        rate = newRate
        try await flushingSeek(to: target, rate: newRate, flags: [.flush, .accurate], timeout: timeout) {
            self.coordinated.seekDone = ContinuousClock.now
            // A network view is ready only with a full buffer; otherwise it would stall (and be suspended)
            // right after the coordinated start.
            let deadline = ContinuousClock.now + timeout
            while self.machine.bufferingPercent < 100 && ContinuousClock.now < deadline && self.failure == nil {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let done = ContinuousClock.now, seekDone = coordinated.seekDone ?? done
        let timing = CoordinatedPreparationTiming(target: time, pause: paused - began, seek: seekDone - paused,
                                                  buffering: done - seekDone)
        coordinated.preparations = Array((coordinated.preparations + [timing]).suffix(8))
        // Made now, while the group waits for the slowest view anyway, so that the start itself is as short as
        // possible (every view's start must land before the instant; see the medium's start margin).
        coordinated.pendingStart = makeSinkStart()
        // Synchronously, here: a coordination medium may start the whole group from this call (the last view to
        // be ready does), and every hop before it would delay the start.
        whenPrepared?(coordinated.pendingStart)
    }

    /// How long a coordinated preparation waits for PAUSED before its flushing seek prerolls the view instead (a
    /// pipeline starved behind a blocked output never reaches PAUSED in place; one that is not reaches it in
    /// milliseconds).
    public static let pauseBeforeSeekLimit: Duration = .seconds(2)

    /// How late a "start at C" may arrive and still start (its first frame then shows at most this much late,
    /// the sinks being up ~0.1 ms after the check); later ones are refused and caught up by the caller.
    public static let lateStartTolerance: Duration = .milliseconds(1)

    /// A start instant this far ahead of the view's clock is reported (see `startCoordinated`).
    public static let farStartInstant: Duration = .seconds(2)

    /// Where the time of the last few coordinated preparations went, oldest first (diagnostics).
    public var coordinatedPreparations: [CoordinatedPreparationTiming] { coordinated.preparations }

    /// The start prepared by the last `prepareCoordinated`, for a coordination medium to run itself (see
    /// `PreparedSinkStart`); nil when there is none (no shared clock, no sinks).
    public var preparedStart: PreparedSinkStart? { coordinated.pendingStart }

    /// Starts a prepared pipeline so that its prepared media time is rendered at `clockTime` on the shared
    /// clock: base time = clockTime − pipeline latency, its sinks to PLAYING at once, the rest of the pipeline
    /// right after. No position is nudged afterwards. When a medium already ran `preparedStart` for this
    /// instant, only the player's own state follows.
    ///
    /// Returns false, and leaves the pipeline prepared (PAUSED) without starting it, when the instant passed
    /// more than `lateStartTolerance` ago: started that late, it would render its first frames late and rush to
    /// catch up — the caller should prepare it again further ahead instead.
    @discardableResult
    public func startCoordinated(at clockTime: ClockTime) throws -> Bool {
        try checkNotFailed()
        completeCoordinatedStart()
        // Only sinks wait on the clock, so starting them is the whole start: a few element state changes
        // (~0.1 ms) instead of the whole pipeline's (0.3–4 ms for playbin3 on two cores).
        let prepared = coordinated.pendingStart ?? makeSinkStart()
        coordinated.pendingStart = nil
        var sinksStarted = false
        if let prepared {
            guard RealtimeSection.run({ prepared.start(at: clockTime) }) else { return false }
            if case .started(_, let started) = prepared.withdraw() { sinksStarted = started }
        } else {
            let clock = coordinated.clock ?? pipeline.clock
            if let now = clock?.time, now >= clockTime + ClockTime(Player.lateStartTolerance) { return false }
            pipeline.startTime = nil
            pipeline.baseTime = clockTime - (pipeline.queryLatency()?.minimum ?? .zero)
        }
        // Playing from the instant on, still waiting until it: nothing is shown before `clockTime`, and a status
        // saying "playing" earlier would be a lie a script could act on.
        apply(.coordinatedStart(sinksAhead: sinksStarted))
        if sinksStarted {
            // The rest of the pipeline follows in a moment, off the critical path. (Deferred to the instant
            // instead, the by-ear test's hand-started control heard a 20 ms offset as 16 ms in 1 run of 4.)
            Task { [weak self] in await self?.completeCoordinatedStart() }
        } else {
            do {
                try pipeline.setState(.playing)
            } catch {
                throw PlayerError(view: view, cause: .startFailed(at: clockTime))
            }
        }
        let generation = machine.coordinatedWaitingGeneration
        let now = (coordinated.clock ?? pipeline.clock)?.time ?? clockTime
        if clockTime > now {
            let wait = Duration.nanoseconds(Int64(clockTime.nanoseconds - now.nanoseconds))
            // A group places its starts tens of ms ahead (its start margin, a catch-up's lead): one seconds ahead
            // on this view's clock means the clocks disagree (a member's net clock off the host's), and the view
            // would show "waiting" and render nothing until then without a word.
            if wait > Player.farStartInstant {
                notice(String(format: "its coordinated start is %.1f s ahead on its clock: it renders nothing until then",
                              wait.inSeconds))
            }
            Task { [weak self] in
                try? await Task.sleep(for: wait)
                await self?.coordinatedStartReached(generation)
            }
        } else {
            coordinatedStartReached(generation)
        }
        publish(.rateChanged(rate))
        return true
    }

    /// A start for the pipeline as it is now (nil without a shared clock or sinks).
    private func makeSinkStart() -> PreparedSinkStart? {
        // The pipeline only hands its clock to elements at PAUSED→PLAYING, so ask the adopted clock itself.
        guard let clock = coordinated.clock ?? pipeline.clock else { return nil }
        let sinks = pipeline.leafSinks()
        guard !sinks.isEmpty else { return nil }
        return PreparedSinkStart(pipeline: pipeline, sinks: sinks, clock: clock,
                                 latency: pipeline.queryLatency()?.minimum ?? .zero, audioClockGuard: audio.clockGuard)
    }

    /// Takes back the prepared start before the player moves on. One a medium ran just before, which this player
    /// never took up (its "play at C" has not arrived), is undone: the sinks go back to the prepared pipeline's
    /// PAUSED, so whatever comes next starts from a consistent pipeline.
    func withdrawPendingStart() {
        guard let prepared = coordinated.pendingStart else { return }
        coordinated.pendingStart = nil
        guard case .started = prepared.withdraw() else { return }
        // Not a sink taken out of the pipeline since it was prepared: the audio output supervisor removes a lost
        // pulsesink from its bin (in NULL), and setting it to PAUSED here reopened its dead connection, was
        // refused, and the refusal failed the view ("cannot change state to PAUSED", CoordinatedKillCommandTests).
        for sink in prepared.sinks where sink.parent != nil {
            do {
                try sink.setState(.paused)
            } catch {
                // The view cannot go back to its prepared state; its next operation starts from a broken pipeline.
                failSoon(PlayerError(view: view, cause: .stateChangeFailed(to: .paused)))
            }
        }
        audio.clockGuard?.noteStopped()
    }

    /// Brings the pipeline to PLAYING behind sinks that `startCoordinated` started ahead of it (its children
    /// already carry the same clock and base time, so nothing moves on screen).
    func completeCoordinatedStart() {
        apply(.pipelineFollows)
    }

    /// The start instant of `startCoordinated` has come: playing for real, unless something changed since.
    private func coordinatedStartReached(_ generation: Int) {
        guard generation == machine.coordinatedWaitingGeneration, machine.target == .playing else { return }
        apply(.coordinatedWaiting(false))
    }
}
