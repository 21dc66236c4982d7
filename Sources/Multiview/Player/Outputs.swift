import GStreamer

/// Where a view's video goes.
public enum VideoOutput: Sendable, Equatable {
    /// No video branch at all (audio-only use).
    case none
    /// Decoded and discarded in real time (`fakesink sync=true`): headless playback, tests, benchmarks.
    case fakeSink
    /// Drawn by the view's own `ximagesink` into an X11 child window of the grid, scaled to the tile (the grid
    /// window draws the tile's tag in a label window of its own).
    case window(WindowTarget)
}

/// A tile of the grid window: the X11 window id and its size in pixels.
public struct WindowTarget: Sendable, Equatable {
    public var handle: UInt
    public var width: Int
    public var height: Int
    public init(handle: UInt, width: Int, height: Int) {
        self.handle = handle; self.width = width; self.height = height
    }
}

/// The external display route's window: an X11 window on another display (e.g. a second Xvfb standing for the TV).
public struct ExternalVideoTarget: Sendable, Equatable {
    /// X display name, e.g. ":91".
    public var display: String
    public var handle: UInt
    public var width: Int
    public var height: Int
    public init(display: String, handle: UInt, width: Int, height: Int) {
        self.display = display; self.handle = handle; self.width = width; self.height = height
    }
}

/// Where a view's audio goes.
public enum AudioOutput: Sendable, Equatable {
    case none
    /// Discarded in real time (`fakesink sync=true`): no PulseAudio server.
    case fakeSink
    /// A PulseAudio stream of its own (default sink when `device` is nil).
    case pulse(device: String?)

    /// PulseAudio when a server answers, else a fake sink. A pulsesink going to READY opens its connection
    /// to the server (GstAudioBaseSink opens the device in NULL→READY), so this is a real reachability check.
    public static func detect() -> AudioOutput {
        PulseMainLoopKeeper.ensure()   // the probe's NULL below then frees no main loop (`PulseMainLoopKeeper`)
        guard let sink = try? Element(factory: "pulsesink") else { return .fakeSink }
        let reachable: Bool
        do { try sink.setState(.ready); reachable = true } catch { reachable = false }
        do {
            try sink.setState(.null)
        } catch {
            // Closing a probe's connection failed: nothing else holds the sink, and the answer stands.
        }
        return reachable ? .pulse(device: nil) : .fakeSink
    }

    /// Whether the PulseAudio server (the default one, or `PULSE_SERVER`) would take a new playback stream on
    /// `device` (nil: the default sink) now: it answers (a pulsesink at READY is connected) and a stream can be
    /// made there (the sink's caps query, which creates a probe stream, is not EMPTY). A daemon that has just
    /// started answers before its sinks are loaded (the soak's restart; a routed view's parking sink comes back
    /// only when the routing arbiter has reconnected): a pulsesink brought into a pipeline then makes playsink fail
    /// ("Failed to configure the audio sink": the view failed with "Internal GStreamer error: pad problem"), and
    /// rebuilding a pipeline after that failure aborted the process in GStreamer 1.22's playbin3
    /// (`reconfigure_output: assertion failed: (combine->sinkpad == NULL)`). So the audio output supervisor waits
    /// for this before it brings a stream back.
    public static func pulseAudioTakesStreams(device: String?) -> Bool {
        PulseMainLoopKeeper.ensure()   // as in `detect()`
        guard let sink = try? Element(factory: "pulsesink") else { return false }
        defer {
            do { try sink.setState(.null) } catch {
                // Closing a probe's connection failed: nothing else holds the sink, and the answer stands.
            }
        }
        if let device, (try? sink.set("device", device)) == nil { return false }
        guard (try? sink.setState(.ready)) != nil, let caps = try? sink.staticPad("sink").queryCaps() else { return false }
        return !caps.isEmpty
    }
}
