import GStreamer

/// Builds a view's playbin3 from its configuration: the video sink (fake sink or the window's sink bin, with the
/// external display branch behind a valve), the audio sink (fake sink or the PulseAudio sink bin) and playbin's
/// flags. Runs once, on the thread that creates the `Player`; the elements it returns are owned by the player.
enum PlayerPipelineBuilder {
    /// What the player keeps of what was built.
    struct Built {
        var pipeline: Pipeline
        /// The caps filter fixing the tile size the video is scaled to (window output only).
        var tileSizeFilter: Element?
        /// The valve in front of the external display branch (nil without one).
        var externalValve: Element?
        /// The PulseAudio daemon the view's pulsesink was made for (`.unknown` without one).
        var pulseServer: PulseServerInstance.Presence = .unknown
        /// The PulseAudio output's bin and parts (nil without PulseAudio output).
        var audioSinkBin: AudioSinkBin.Parts?
    }

    static func build(_ configuration: PlayerConfiguration) throws(PlayerError) -> Built {
        let view = configuration.view
        let playbin: Pipeline
        do {
            playbin = try Pipeline(factory: "playbin3", name: "view\(view.number)")
        } catch {
            throw PlayerError(view: view, cause: .missingElement("playbin3"))
        }
        var built = Built(pipeline: playbin)
        do {
            switch configuration.video {
            case .none:
                break
            case .fakeSink:
                let sink = try Element(factory: "fakesink", name: "videosink")
                try sink.set("sync", true)
                try sink.set("qos", true)
                // A frame more than 20 ms late is dropped, not shown late: what every GStreamer video sink does
                // (GstVideoSink's default), so a headless view behaves as a window does. fakesink's default (-1)
                // showed every late frame: a view whose decoding fell behind ran up to 300 ms after its clock
                // until it caught up (LateFrameTests).
                try sink.set("max-lateness", 20_000_000)
                try playbin.set("video-sink", try withExternalBranch(sink, configuration, &built.externalValve))
            case .window(let target):
                // One sink per view, in the view's own pipeline: frames are shown on the streaming thread at
                // their clock time, so the window adds no scheduling of its own to the sync we measure.
                // Scaled first (fewer pixels to convert), to the tile's size, letterboxed (videoscale's add-borders)
                // when the video's shape differs; the tile's tag is the grid window's own label, not burnt in, so it
                // changes at once even while the view is paused.
                // No upstream element allocates from ximagesink's pool (identity drops the allocation query):
                // 1.22's pool makes its images with the sink's X context and does not check that it still
                // exists: a decoder thread that allocated after the sink had left READY crashed the process
                // (`ximage_memory_alloc` reading NULL+0x58, once in 30 runs of WindowFitTests). The sink then
                // copies each tile-sized frame into an image of its own, on its own streaming thread.
                let bin = try Bin.parse("""
                    videoscale name=in ! capsfilter name=size caps="\(tileCaps(width: target.width, height: target.height))" ! \
                    videoconvert ! identity drop-allocation=true ! ximagesink name=xsink force-aspect-ratio=false
                    """)
                guard let sink = bin.child(named: "xsink") else {
                    throw GStreamerError.missingElement(factory: "ximagesink")
                }
                try sink.setWindowHandle(target.handle)
                try playbin.set("video-sink", try withExternalBranch(bin, configuration, &built.externalValve))
                built.tileSizeFilter = bin.child(named: "size")
            }
            switch configuration.audio {
            case .none:
                break
            case .fakeSink:
                try playbin.set("audio-sink", try fakeAudioSink())
            case .pulse(let device):
                built.pulseServer = PulseServerInstance.probe()
                let parts = try AudioSinkBin.make(configuration, device: device, server: built.pulseServer)
                built.audioSinkBin = parts
                try playbin.set("audio-sink", parts.bin)
            }
            try playbin.set("flags", fromString: flags(configuration, subtitles: true))
        } catch let error as GStreamerError {
            if case .missingElement(let f) = error { throw PlayerError(view: view, cause: .missingElement(f)) }
            throw PlayerError(view: view, cause: .construction(error))
        } catch {
            throw PlayerError(view: view, cause: .output("\(error)"))
        }
        return built
    }

    /// The caps a tile's video is scaled to: the tile's size in square pixels.
    static func tileCaps(width: Int, height: Int) -> String {
        "video/x-raw,width=\(width),height=\(height),pixel-aspect-ratio=1/1"
    }

    /// Drops the tag events reaching the audio sink from upstream: pulsesink renames its stream after any title
    /// tag, so a track switch (`lang 1 audio fr`) renamed the view's stream to its track's title ("Audio"). The
    /// view's own title comes from the sink's `taginject`, behind this pad. Installed while the probe lives.
    static func keepStreamName(_ audioSinkPad: Pad) -> PadProbe {
        audioSinkPad.addProbe(.eventDownstream) { info in info.eventName == "tag" ? .drop : .ok }
    }

    /// The audio sink of a view without sound output (or, named `lost`, the output of a view whose PulseAudio
    /// stream is lost: see `AudioSinkBin`): renders on the clock, so the view's video and timing go on as with sound.
    static func fakeAudioSink(name: String = "audiosink") throws -> Element {
        let sink = try Element(factory: "fakesink", name: name)
        try sink.set("sync", true)
        return sink
    }

    /// playbin's flags (by nick) for `configuration`; `subtitles` false leaves out "text" (subtitles hidden, their
    /// stream still selected: see `Player.applyLanguagePreferences`).
    static func flags(_ configuration: PlayerConfiguration, subtitles: Bool) -> String {
        // "buffering": playbin3 reports network buffering levels (stalls) — needed for stallRecovery.
        var flags = ["soft-volume", "buffering"]
        if case .none = configuration.audio {} else { flags.append("audio") }
        if subtitles { flags.append("text") }
        switch configuration.video {
        case .none: break
        case .fakeSink: flags.append("video")
        case .window:
            flags.append("video")
            if configuration.visualizeAudioOnly { flags.append("vis") }
        }
        return flags.joined(separator: "+")
    }

    /// `sink` alone, or (with an external display configured) a tee feeding `sink` and, through a closed valve,
    /// an `ximagesink` drawing into the external display's window. The external sink is `async=false`: it gets no
    /// buffers while the valve is closed and must not hold up preroll.
    static func withExternalBranch(_ sink: Element, _ configuration: PlayerConfiguration,
                                   _ valve: inout Element?) throws -> Element {
        guard let external = configuration.externalVideo else { return sink }
        let display = external.display.replacingOccurrences(of: "\"", with: "")
        let bin = try Bin.parse("""
            tee name=split ! queue name=local \
            split. ! valve name=external drop=true ! queue max-size-buffers=3 leaky=downstream ! videoconvert ! \
            videoscale ! video/x-raw,width=\(external.width),height=\(external.height),pixel-aspect-ratio=1/1 ! \
            textoverlay text="\(configuration.view.number) \(configuration.view.name.replacingOccurrences(of: "\"", with: "'"))" \
            valignment=top halignment=left font-desc="Sans Bold 14" shaded-background=true ! \
            videoconvert ! ximagesink name=externalsink display="\(display)" async=false force-aspect-ratio=false
            """, ghostUnlinkedPads: false)
        guard let split = bin.child(named: "split"), let local = bin.child(named: "local"),
              let externalSink = bin.child(named: "externalsink") else {
            throw GStreamerError.missingElement(factory: "tee/valve/ximagesink")
        }
        try bin.add(sink)
        try local.link(sink)
        try bin.addGhostPad(named: "sink", target: try split.staticPad("sink"))
        try externalSink.setWindowHandle(external.handle)
        valve = bin.child(named: "external")
        return bin
    }
}
