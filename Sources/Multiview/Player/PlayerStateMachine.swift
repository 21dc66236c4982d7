import GStreamer

/// The decisions of one view, with no I/O: what the pipeline reported (bus facts), what the player was asked
/// (commands) and what the starvation watch saw go in; what the player must do (set a state, arm the audio clock
/// guard, publish) and the derived `PlayerStatus` come out. GstPlay keeps the same split between its state
/// machine and the pipeline calls it makes.
///
/// The `Player` actor owns its one instance and performs the actions in order; tests drive it directly
/// (PlayerStateMachineTests, no GStreamer needed).
struct PlayerStateMachine: Sendable, Equatable {
    /// Something that happened, from the bus or from the player's own operations.
    enum Input: Sendable, Equatable {
        // Bus facts.
        /// The pipeline (not a child) changed state.
        case stateChanged(ElementState)
        /// A buffering message with its fill level.
        case buffering(percent: Int)
        /// The clock provider went away.
        case clockLost
        /// An element asks for PAUSED or PLAYING (pulsesink on cork / uncork). `coordinated`: a coordinator
        /// decides what the view does on an uncork.
        case requestState(ElementState, coordinated: Bool)
        /// The pipeline reached its end.
        case endOfStream
        /// The starvation watch's verdicts (see `VideoStarvationWatch`).
        case videoStarved
        case videoFlowing

        // Commands and the player's own operations.
        /// A new source was loaded: the failure and end of the previous one are forgotten.
        case loaded
        /// The player is about to ask the pipeline for `state` (transport, preroll) and will handle the result.
        case changeState(to: ElementState)
        /// The pipeline's own state, read after an asynchronous change settled (its bus message may come later).
        case settled(ElementState)
        /// Stop: asked for NULL, and there at once.
        case stop
        /// The pipeline is taken down to NULL to be rebuilt (a sink replaced); what it was asked for stays.
        case pipelineReset
        case seekStarted
        case seekFinished
        /// A coordinator holds (or releases) the view until every view is ready.
        case coordinatedWaiting(Bool)
        /// The sinks (or the pipeline) were started for a coordinated instant: the view plays from then.
        /// `sinksAhead`: only the sinks were started; the rest of the pipeline follows (`pipelineFollows`).
        case coordinatedStart(sinksAhead: Bool)
        /// Anything else is about to happen to the pipeline (a bus message, a state change, a seek): a pipeline
        /// whose sinks were started ahead of it is brought up first, or a PAUSED request would be a no-op that
        /// leaves the sinks playing.
        case pipelineFollows
        /// The view failed for good.
        case failed
    }

    /// What the player must do about an input, in order.
    enum Action: Sendable, Equatable {
        /// Ask the pipeline for this state; the player handles the result (see `Player.perform`).
        case setPipelineState(ElementState)
        /// Arm the PulseAudio sink's clock guard (before any PLAYING of a coordinated view, and before a flushing
        /// seek of a playing one, which restarts its sinks by itself).
        case armAudioClockGuard
        case publishStatus(PlayerStatus)
        /// An audio interruption began (cork) or ended (uncork).
        case publishInterruption(began: Bool)
        /// Frames seen before this PLAYING do not count for the starvation watch.
        case rearmVideoWatch
    }

    private(set) var target: ElementState = .null
    private(set) var current: ElementState = .null
    private(set) var bufferingPercent = 100
    /// The pipeline was paused by a buffering message and must be resumed by the one that reaches 100 %. A flag,
    /// not `current == .paused`: the 100 % message can arrive before the PAUSED state change is read from the
    /// bus, and a view then stayed paused for good.
    private(set) var heldForBuffering = false
    /// Video stopped reaching the sink while playing: shown as buffering, like a network stall.
    private(set) var videoStarved = false
    /// Flushing seeks under way (a seek of the player's own can run inside another operation's wait).
    private(set) var seeksInFlight = 0
    private(set) var coordinatedWaiting = false
    /// The coordinated start started the sinks and the pipeline has not followed yet: it reads PAUSED with its
    /// sinks PLAYING.
    private(set) var sinksAheadOfPipeline = false
    /// Counts changes of `coordinatedWaiting`, so that a scheduled "start instant reached" can tell it is stale.
    private(set) var coordinatedWaitingGeneration = 0
    private(set) var hasFailed = false
    private(set) var reachedEnd = false
    private(set) var status = PlayerStatus(state: .stopped, waitingToPlay: nil)
    /// The view has been PLAYING at least once.
    private(set) var hasPlayed = false

    var seekInFlight: Bool { seeksInFlight > 0 }

    /// Whether a silent video sink means starvation now: asked to play and playing, not seeking, not at the end,
    /// not held for a coordinated start, not failed.
    var watchesVideoFlow: Bool {
        target == .playing && current == .playing && !seekInFlight && !reachedEnd && !coordinatedWaiting && !hasFailed
    }

    /// Applies one input and returns what to do, a status publication last when the status changed.
    mutating func apply(_ input: Input) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .stateChanged(let new):
            // Frames before this PLAYING (a pause, a buffering hold) say nothing about starvation now.
            if new == .playing && current != .playing { actions += rearmVideoWatch() }
            current = new
        case .settled(let state):
            // The same rule as the bus's message for it: whichever of the two reports PLAYING first rearms the
            // watch (the settled read often comes first; the bus's message then finds the view playing already, and
            // a first PLAYING that rearmed nothing left the watch unstarted: a starved view was never judged).
            if state == .playing && current != .playing { actions += rearmVideoWatch() }
            current = state
        case .buffering(let percent):
            bufferingPercent = percent
            // Standard network buffering: hold in PAUSED until the queue is full, then carry on.
            if target == .playing {
                if percent < 100 && current == .playing && !heldForBuffering {
                    heldForBuffering = true
                    actions.append(.setPipelineState(.paused))
                }
                if percent >= 100 && (heldForBuffering || current == .paused) {
                    heldForBuffering = false
                    actions += [.armAudioClockGuard, .setPipelineState(.playing)]
                }
            }
        case .clockLost:
            // Re-select a clock by cycling through PAUSED.
            if target == .playing {
                actions += [.setPipelineState(.paused), .armAudioClockGuard, .setPipelineState(.playing)]
            }
        case .requestState(let state, let coordinated):
            // The view stops rendering at once on a cork; it resumes by itself on an uncork only when
            // uncoordinated (a coordinator rejoins the group's time instead).
            guard state >= .paused, !hasFailed else { break }
            actions.append(.publishInterruption(began: state == .paused))
            if state == .paused || !coordinated {
                target = state
                // Every start is armed, so that the audio clock guard judges it (a start it never saw would leave
                // the stop noted before it standing for the next one).
                if state == .playing { actions.append(.armAudioClockGuard) }
                actions.append(.setPipelineState(state))
            }
        case .endOfStream:
            reachedEnd = true
        case .videoStarved:
            videoStarved = true
        case .videoFlowing:
            videoStarved = false
        case .loaded:
            hasFailed = false
            reachedEnd = false
        case .changeState(let state):
            target = state
            heldForBuffering = false
            // The operation asking sets the state itself and waits for it (`Player.changeState`).
            if state == .playing { actions.append(.armAudioClockGuard) }
        case .stop:
            sinksAheadOfPipeline = false
            target = .null
            actions.append(.setPipelineState(.null))
            current = .null
        case .pipelineReset:
            sinksAheadOfPipeline = false
            actions.append(.setPipelineState(.null))
            current = .null
        case .seekStarted:
            seeksInFlight += 1
            reachedEnd = false
            // A flushing seek of a playing pipeline restarts its sinks by itself once it has prerolled again: that
            // start uncorks the PulseAudio stream like any other, so the guard must be armed for it too.
            if target == .playing { actions.append(.armAudioClockGuard) }
            actions += rearmVideoWatch()
        case .seekFinished:
            seeksInFlight = max(0, seeksInFlight - 1)
        case .coordinatedWaiting(let waiting):
            setCoordinatedWaiting(waiting)
        case .coordinatedStart(let sinksAhead):
            sinksAheadOfPipeline = sinksAhead
            target = .playing
            heldForBuffering = false
            actions += rearmVideoWatch()
            // Still waiting until the instant itself: nothing is shown before it.
            setCoordinatedWaiting(true)
        case .pipelineFollows:
            guard sinksAheadOfPipeline else { break }
            sinksAheadOfPipeline = false
            // Its children already carry the clock and base time, so nothing moves on screen.
            if target == .playing && !hasFailed { actions.append(.setPipelineState(.playing)) }
        case .failed:
            guard !hasFailed else { break }
            sinksAheadOfPipeline = false
            hasFailed = true
            target = .null
            actions.append(.setPipelineState(.null))
            current = .null
        }
        if let next = publishedStatus() { actions.append(.publishStatus(next)) }
        return actions
    }

    /// Frames seen so far no longer count (a new PLAYING, a seek, a coordinated start): clears a starved mark.
    private mutating func rearmVideoWatch() -> [Action] {
        videoStarved = false
        return [.rearmVideoWatch]
    }

    private mutating func setCoordinatedWaiting(_ waiting: Bool) {
        coordinatedWaiting = waiting
        coordinatedWaitingGeneration &+= 1
    }

    /// The status the view shows now; nil when it has not changed since the last call.
    private mutating func publishedStatus() -> PlayerStatus? {
        let next = PlayerStateMachine.deriveStatus(self)
        guard next != status else { return nil }
        status = next
        if next.state == .playing { hasPlayed = true }
        return next
    }

    /// What a user sees, from GStreamer's states and the player's holds (GstPlay's app-level state).
    static func deriveStatus(_ s: PlayerStateMachine) -> PlayerStatus {
        if s.hasFailed || s.current <= .ready && s.target <= .ready && !s.coordinatedWaiting {
            return PlayerStatus(state: .stopped, waitingToPlay: nil)
        }
        if s.coordinatedWaiting {
            return PlayerStatus(state: s.current == .playing ? .playing : .paused,
                                waitingToPlay: .waitingForCoordinatedPlayback)
        }
        if s.target == .playing && (s.bufferingPercent < 100 || s.videoStarved) {
            return PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: s.videoStarved ? 0 : s.bufferingPercent))
        }
        if s.current == .playing && !s.seekInFlight { return PlayerStatus(state: .playing, waitingToPlay: nil) }
        if s.target == .playing {
            return PlayerStatus(state: s.current == .playing ? .playing : .paused,
                                waitingToPlay: s.seekInFlight ? .seeking : .loading)
        }
        return PlayerStatus(state: s.current >= .paused ? .paused : .stopped, waitingToPlay: nil)
    }
}
