import GStreamer

/// A view's volume and mute, as the user sets them (`volume N 50`, `mute N`, the window's `m` key, MPRIS Volume).
///
/// The state is playbin3's own `volume` (linear, 1.0 = the media's level) and `mute` properties; the pipeline is
/// built with the "soft-volume" flag, so both act on playsink's own volume element inside this view's pipeline and
/// never on the PulseAudio stream. That keeps them apart from the routing arbiter, which suppresses a view by muting
/// its stream on the PulseAudio server (and parking it): a suppressed view stays silent whatever its volume here,
/// and unmuting here never lets a suppressed view through.
///
/// Threading: changes go through the player's actor (one writer, in command order); reads go to the playbin's
/// properties, which GObject guards, so the status line and a D-Bus property read need not wait for the actor.
extension Player {
    /// The view's volume and mute now.
    public struct AudioLevel: Sendable, Equatable {
        /// Linear gain, 1.0 = the media's own level.
        public var volume: Double
        public var muted: Bool

        public init(volume: Double, muted: Bool) {
            self.volume = volume
            self.muted = muted
        }

        /// "muted", "vol 50%", or nil at the media's own level and not muted (nothing worth showing).
        public var label: String? {
            if muted { return "muted" }
            let percent = Int((volume * 100).rounded())
            return percent == 100 ? nil : "vol \(percent)%"
        }
    }

    /// Reads playbin3's volume and mute (not waiting for the actor).
    public nonisolated var audioLevel: AudioLevel {
        get throws {
            AudioLevel(volume: try pipeline.get("volume", as: Double.self),
                       muted: try pipeline.get("mute", as: Bool.self))
        }
    }

    /// Sets the volume, linear (0.5 = half the media's level); clamped to 0 … 10, playbin3's own range.
    @discardableResult
    public func setVolume(_ linear: Double) throws -> AudioLevel {
        try pipeline.set("volume", min(max(linear, 0), 10))
        return try audioLevel
    }

    /// Mutes or unmutes the view.
    @discardableResult
    public func setMuted(_ muted: Bool) throws -> AudioLevel {
        try pipeline.set("mute", muted)
        return try audioLevel
    }
}
