import GStreamer

/// A view's PulseAudio output: one bin, built once with the pipeline and never taken out of it, holding
/// `taginject name=name ! volume name=primer ! queue name=decouple ! <output>`, where the output is the view's
/// pulsesink (`pulse`) or, while its PulseAudio stream is lost, a fake sink (`lost`) that keeps the audio branch
/// flowing on the clock.
///
/// Why `decouple` (issue 15, the soak's frozen HLS views): PulseAudio sometimes takes no samples from one stream for
/// seconds after a view (re)starts (12 s seen with GST_DEBUG=audiobasesink: the sink's write blocked while its
/// stream's time ran on; the server served the other views). pulsesink then blocks, the audio queues behind it fill,
/// and the demuxer, which feeds audio and video from one thread (adaptivedemux2's output loop; qtdemux,
/// matroskademux alike), blocks on its audio pad: the video queue runs dry and the picture stands still until
/// PulseAudio moves again (3-23 s in the soak, two frames into the second segment after a seek: "BUFFERING 0%" at
/// x.233 s). For media with video the queue is leaky (`decoupleFromVideo`): it never blocks its upstream, it holds
/// `decoupledAudio` of samples and drops the oldest beyond that, so a stalled stream costs its own sound, never
/// the picture. Audio is produced at the video's pace there (the demuxer waits on its full video queue, about a
/// second ahead of playback, paused or playing), so nothing is dropped while PulseAudio takes samples. Audio-only
/// media keep a plain queue: nothing else paces them, and a leaky queue would drop their sound.
///
/// Why the output is swapped inside the bin and the pipeline is not taken down: surviving a PulseAudio kill by
/// taking the pipeline to NULL and building it again while it may still be starting hit GStreamer 1.22 teardown
/// bugs — a hang (a typefind thread emitting have-type waited on a playback-bin lock held by the state change that
/// waited, in `gst_pad_stop_task`, for that same typefind task) and an abort in adaptivedemux2
/// (`download_request_set_uri: assertion failed`). Swapping one leaf sink stops no source, demuxer or decoder task.
///
/// Used on the player's queue only (the `Player` actor); the bin and its children are owned by the pipeline.
enum AudioSinkBin {
    /// The name of the output while the PulseAudio stream is lost.
    static let lostOutputName = "lost"

    /// The view's audio sink bin with a fresh PulseAudio stream as its output. The bin's `volume` element
    /// (passthrough unless muted) silences the samples while the stream is primed (`primeAudioStream`) without
    /// touching the stream's volume or mute on the server, which the routing layer and PulseAudio's role-cork
    /// module own.
    static func make(_ configuration: PlayerConfiguration, device: String?,
                     server: PulseServerInstance.Presence) throws -> Element {
        let bin = try Bin.parse("taginject name=name ! volume name=primer ! queue name=decouple", ghostUnlinkedPads: false)
        guard let naming = bin.child(named: "name"), let decouple = bin.child(named: "decouple") else {
            throw GStreamerError.missingElement(factory: "taginject/volume/queue")
        }
        let quoted = configuration.view.name.replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "'")
        try naming.set("tags", "title=\"\(quoted)\"")
        let sink = try makePulseStream(configuration, device: device, server: server)
        try bin.add(sink)
        try decouple.link(sink)
        try bin.addGhostPad(named: "sink", target: try naming.staticPad("sink"))
        return bin
    }

    /// The view's pulsesink. pulsesink names its stream after the title tag ("Playback Stream" without one), so
    /// the bin's taginject gives every view's stream the view's name in pactl/pavucontrol. `server` is the daemon
    /// that answers now: its client name keeps the sink off a dead daemon's shared connection (`PulseConnectionName`).
    static func makePulseStream(_ configuration: PlayerConfiguration, device: String?,
                                server: PulseServerInstance.Presence) throws -> Element {
        let sink: Element
        do { sink = try Element(factory: "pulsesink", name: "pulse") } catch {
            throw GStreamerError.missingElement(factory: "pulsesink")
        }
        if let device { try sink.set("device", device) }
        try sink.set("client-name", PulseConnectionName.name(for: server))
        // multiview.view names the view on the server (the routing layer finds its streams by it).
        let extra = configuration.audioStreamProperties.sorted { $0.key < $1.key }
            .map { ",\($0.key)=(string)\"\($0.value)\"" }.joined()
        try sink.set("stream-properties", fromString:
            "props,media.role=video,application.name=Multiview,multiview.view=(string)\"\(configuration.view.number)\"" + extra)
        // Installed now, while no thread reads the sink's clock; armed before each start of a coordinated view.
        _ = try sink.guardAudioClock()
        return sink
    }

    /// How much decoded audio the leaky `decouple` queue holds before it drops the oldest: above the ~1-1.5 s the
    /// video's pace lets the audio run ahead of playback (the decoders' multiqueue holds a 1 s minimum interleave).
    static let decoupledAudio: Duration = .seconds(3)

    /// Makes the bin's queue leaky (see the type's comment): called once the view's media is known to have video.
    static func decoupleFromVideo(_ bin: Bin) {
        guard let queue = bin.child(named: "decouple") else { return }
        do {
            try queue.set("max-size-buffers", fromString: "0")
            try queue.set("max-size-bytes", fromString: "0")
            try queue.set("max-size-time", fromString: String(ClockTime(decoupledAudio).nanoseconds))
            try queue.set("leaky", fromString: "downstream")
        } catch {
            // A queue refusing its own properties cannot happen; the view then keeps a blocking queue.
        }
    }

    /// The output while the PulseAudio stream is lost: the fake audio sink, named so that `output(of:)` finds it.
    static func makeLostOutput() throws -> Element {
        try PlayerPipelineBuilder.fakeAudioSink(name: lostOutputName)
    }

    /// The bin's current output (the pulsesink, or the fake sink while the stream is lost).
    static func output(of bin: Bin) -> Element? {
        bin.child(named: "pulse") ?? bin.child(named: lostOutputName)
    }

    /// Takes the bin's output out (to NULL, which also releases a streaming thread blocked in it) and puts
    /// `replacement` in its place, linked but held in NULL (locked state) so that the caller decides when it
    /// joins the pipeline's state (`join`). The bin's name, priming and decoupling elements, and the probes on its
    /// ghost pad, stay.
    static func replaceOutput(of bin: Bin, with replacement: Element) throws {
        guard let decouple = bin.child(named: "decouple") else { throw GStreamerError.missingElement(factory: "queue") }
        if let old = output(of: bin) {
            old.setLockedState(true)
            do { try old.setState(.null) } catch {
                // A sink refusing NULL is still taken out: nothing of it is used again.
            }
            decouple.unlink(old)
            _ = bin.remove(old)
        }
        replacement.setLockedState(true)
        try bin.add(replacement)
        try decouple.link(replacement)
    }

    /// Lets the new output follow the bin's state again and brings it there (PAUSED: it prerolls with the next
    /// flushing seek).
    static func join(_ output: Element) throws {
        output.setLockedState(false)
        try output.syncStateWithParent()
    }
}
