import Foundation
import GStreamer

/// Transport: what a user (or a coordinator, through `…Locally`) asks of one view. Each call is one operation
/// on the player's actor; the state machine decides the status it shows meanwhile.
extension Player {
    /// Opens a file or URI. Missing local files fail here, before GStreamer gets involved.
    public func load(_ source: MediaSource) throws {
        if let path = source.path, !FileManager.default.fileExists(atPath: path) {
            let error = PlayerError(view: view, cause: .fileNotFound(path: path))
            fail(error)
            throw error
        }
        // After a failure: its NULL (run off this queue) is done first, and this one is an ordinary NULL.
        try finishFailedTeardown()
        failure = nil
        startStall = StartStall()
        takePipelineDown()
        useSystemClock()
        self.source = source
        // Whether the new media has video is learnt from its first frame (the starvation watch).
        videoFlow.mediaLoaded()
        apply(.loaded)
        missingPlugins = []
        missingDecoders = []
        try pipeline.set("uri", source.uri)
    }

    /// Goes to PAUSED and waits until the first frame is ready (or the media failed).
    public func preroll(timeout: Duration = .seconds(20)) async throws {
        try await exclusively { try await prerollNow(timeout: timeout) }
    }

    /// `preroll` inside an operation that already holds the queue.
    func prerollNow(timeout: Duration) async throws {
        try checkNotFailed()
        try await changeState(to: .paused, timeout: timeout)
    }

    /// Plays. When a coordinator intercepts transport commands, it decides what happens (see `TransportInterceptor`).
    public func play(timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.play, player: self) { return }
        try await playLocally(timeout: timeout)
    }

    public func pause(timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.pause, player: self) { return }
        try await pauseLocally(timeout: timeout)
    }

    /// Plays this view only, bypassing any coordinator.
    public func playLocally(timeout: Duration = .seconds(20)) async throws {
        try await exclusively {
            try checkNotFailed()
            apply(.coordinatedWaiting(false))
            audio.replacements.userWants(playing: true)
            try await changeState(to: .playing, timeout: timeout)
        }
    }

    /// Pauses this view only, bypassing any coordinator.
    public func pauseLocally(timeout: Duration = .seconds(20)) async throws {
        try await exclusively {
            try checkNotFailed()
            audio.replacements.userWants(playing: false)
            try await changeState(to: .paused, timeout: timeout)
        }
    }

    /// Stops and releases the decoders (NULL state). The pipeline can be played again.
    public func stop() {
        withdrawPendingStart()
        completeCoordinatedStart()
        apply(.stop)
    }

    /// After a reload, plays again: with a coordinator, at the group's time and with the group (the group does not
    /// move: a seek or play of this view would be a command to every view); alone, from `position` (nil: from
    /// where the reload left it).
    public func resumeAfterReload(from position: ClockTime?, timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.rejoin, player: self) { return }
        if let position { try await seekLocally(to: position, timeout: timeout) }
        try await playLocally(timeout: timeout)
    }

    /// Accurate (frame-exact) or key-unit flushing seek; returns once the pipeline has prerolled there.
    public func seek(to position: ClockTime, accurate: Bool = true, timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.seek(position), player: self) { return }
        try await seekLocally(to: position, accurate: accurate, timeout: timeout)
    }

    /// Seeks this view only, bypassing any coordinator. Seeks asked while this one waits for its turn merge into
    /// it (the newest target wins; see `PlayerOperationQueue`).
    public func seekLocally(to position: ClockTime, accurate: Bool = true, timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        try await queuedSeek(to: position, accurate: accurate, timeout: timeout)
    }

    /// The seek itself, run by the queue.
    func seekNow(to position: ClockTime, accurate: Bool, timeout: Duration) async throws {
        try checkNotFailed()
        if machine.current < .paused { try await prerollNow(timeout: timeout) }
        if let duration, position > duration {
            throw PlayerError(view: view, cause: .seekPastEnd(target: position, duration: duration))
        }
        try await flushingSeek(to: position, rate: rate, flags: accurate ? [.flush, .accurate] : [.flush, .keyUnit],
                               timeout: timeout)
        publish(.seekCompleted(position: self.position ?? position))
    }

    /// Relative seek, clamped to the media (see `seekTarget(by:)`).
    public func seek(by seconds: Double) async throws {
        if let interceptor, try await interceptor.intercept(.seekBy(seconds), player: self) { return }
        try await seek(to: seekTarget(by: seconds))
    }

    /// Where `seek(by:)` goes from here: the position moved by `seconds`, kept between 0 and 0.1 s before the end.
    public func seekTarget(by seconds: Double) -> ClockTime {
        var target = max(0, (position?.seconds ?? 0) + seconds)
        if let duration { target = min(target, max(0, duration.seconds - 0.1)) }
        return .seconds(target)
    }

    /// Changes the playback rate with a flushing accurate seek at the current position.
    public func setRate(_ newRate: Double, timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.rate(newRate), player: self) { return }
        try await setRateLocally(newRate, timeout: timeout)
    }

    /// Changes this view's rate only, bypassing any coordinator.
    public func setRateLocally(_ newRate: Double, timeout: Duration = .seconds(20)) async throws {
        guard newRate > 0 else { throw PlayerError(view: view, cause: .invalidRate(newRate)) }
        try await exclusively {
            try checkNotFailed()
            if machine.current < .paused { try await prerollNow(timeout: timeout) }
            rate = newRate
            try await flushingSeek(to: position ?? .zero, rate: newRate, flags: [.flush, .accurate], timeout: timeout)
            publish(.rateChanged(newRate))
        }
    }

    public var position: ClockTime? { pipeline.queryPosition() }
    public var duration: ClockTime? { pipeline.queryDuration() }

    /// Scales the video to a new tile size (window output only; the grid window calls it when the tiles are laid out
    /// again). Thread-safe: capsfilter takes its caps under its object lock and asks upstream to renegotiate, so the
    /// next frame comes in the new size, letterboxed by videoscale when the aspect ratios differ.
    public nonisolated func resizeTile(width: Int, height: Int) throws {
        try tileSizeFilter?.set("caps", fromString: PlayerPipelineBuilder.tileCaps(width: width, height: height))
    }

    /// Shows (or stops showing) this view on the external display route. The grid tile keeps playing either way;
    /// both branches render on the same pipeline clock, so coordinated views stay aligned on both screens.
    public func setExternalVideoActive(_ active: Bool) {
        try? externalValve?.set("drop", !active)
    }

    /// Whether this view's video currently flows to the external display.
    public var isExternalVideoActive: Bool {
        guard let externalValve, let drop = try? externalValve.get("drop", as: Bool.self) else { return false }
        return !drop
    }

    /// Takes the pipeline to NULL before it is given a new source; what it was asked for stays (the caller says
    /// what comes next).
    func takePipelineDown() {
        withdrawPendingStart()
        apply(.pipelineReset)   // going to NULL: nothing to bring up behind the sinks
    }
}
