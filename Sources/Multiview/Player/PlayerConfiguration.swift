import GStreamer

/// Static settings of one view.
public struct PlayerConfiguration: Sendable {
    public var view: ViewIdentity
    public var video: VideoOutput
    public var audio: AudioOutput
    /// Draw a visualisation (goom) for audio-only media so its tile is not blank. Off headless.
    public var visualizeAudioOnly: Bool
    /// Run the thread that waits on the clock and renders video (playsink's `vqueue`) with real-time priority,
    /// so a loaded machine does not wake it late (see `RealtimeStreamThreads`). Falls back silently to normal
    /// scheduling where the kernel refuses; `Player.realtimeRendering` tells which happened.
    public var realtimeVideoRendering: Bool
    /// Extra PulseAudio stream properties (the routing layer tags its streams so it can find them on the server).
    public var audioStreamProperties: [String: String] = [:]
    /// A second video output (the external display route), fed through a valve that is closed until
    /// `setExternalVideoActive(true)`.
    public var externalVideo: ExternalVideoTarget?
    /// Where a PulseAudio stream's playout is read from when its audio follows the pipeline's clock.
    public var audioPlayoutTiming: AudioPlayoutTiming = .server

    public init(view: ViewIdentity, video: VideoOutput = .fakeSink, audio: AudioOutput = .fakeSink,
                visualizeAudioOnly: Bool = false, realtimeVideoRendering: Bool = true) {
        self.view = view; self.video = video; self.audio = audio; self.visualizeAudioOnly = visualizeAudioOnly
        self.realtimeVideoRendering = realtimeVideoRendering
    }
}

/// Which measurement of a PulseAudio stream's playout an `AudioClockFollower` is given (see `PulseTimingTap`).
public enum AudioPlayoutTiming: String, Sendable, CaseIterable {
    /// The server's own timing snapshots (`PulseTimingTap`), libpulse's smoothed time where they cannot be read.
    case server
    /// libpulse's smoothed stream time as pulsesink's clock reads it (before issue 17's last change; the bench's
    /// before row).
    case libpulse
}
