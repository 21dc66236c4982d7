import GStreamer

/// A view's PulseAudio output: one bin, built once with the pipeline and never taken out of it, holding
/// `taginject name=name ! volume name=primer ! <output>`, where the output is the view's pulsesink (`pulse`) or,
/// while its PulseAudio stream is lost, a fake sink (`lost`) that keeps the audio branch flowing on the clock.
///
/// Why the output is swapped inside the bin and the pipeline is not taken down: surviving a PulseAudio kill by
/// taking the pipeline to NULL and building it again while it may still be starting hit GStreamer 1.22 teardown
/// bugs — a hang (a typefind thread emitting have-type waited on a playback-bin lock held by the state change that
/// waited, in `gst_pad_stop_task`, for that same typefind task) and an abort in adaptivedemux2
/// (`download_request_set_uri: assertion failed`). Swapping one leaf sink stops no source, demuxer or decoder task.
///
/// Used on the player's queue only (the `Player` actor); the bin and its children are owned by the pipeline.
///
/// The player keeps the bin's parts (`Parts`) instead of finding them by name: `gst_bin_get_by_name` holds the bin's
/// lock while it takes each child's, and a pulsesink posting an error holds PulseAudio's main-loop lock while it
/// takes its parents' locks (`GST_ELEMENT_ERROR` names the element by its path). After a PulseAudio kill, a view at
/// its end drained into a dead stream (the cork failed and posted that error) while its player looked up the
/// bin's output to replace it, and other views paused, waiting on the main loop: CoordinatedKillCommandTests hung
/// for good, once. Lookups by name take those locks in the other order; the kept parts take none.
enum AudioSinkBin {
    /// The name of the output while the PulseAudio stream is lost.
    static let lostOutputName = "lost"

    /// The bin, its priming volume and its current output. A value of the player's audio state (the actor's).
    struct Parts: Sendable {
        let bin: Bin
        let primer: Element
        /// The pulsesink, or the fake sink while the stream is lost.
        var output: Element
        /// The output when it is a pulsesink.
        var pulse: Element? { output.factoryName == "pulsesink" ? output : nil }
    }

    /// The view's audio sink bin with a fresh PulseAudio stream as its output. The bin's `volume` element
    /// (passthrough unless muted) silences the samples while the stream is primed (`primeAudioStream`) without
    /// touching the stream's volume or mute on the server, which the routing layer and PulseAudio's role-cork
    /// module own.
    static func make(_ configuration: PlayerConfiguration, device: String?,
                     server: PulseServerInstance.Presence) throws -> Parts {
        let bin = try Bin.parse("taginject name=name ! volume name=primer", ghostUnlinkedPads: false)
        guard let naming = bin.child(named: "name"), let primer = bin.child(named: "primer") else {
            throw GStreamerError.missingElement(factory: "taginject/volume")
        }
        let quoted = configuration.view.name.replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "'")
        try naming.set("tags", "title=\"\(quoted)\"")
        let sink = try makePulseStream(configuration, device: device, server: server)
        try bin.add(sink)
        try primer.link(sink)
        try bin.addGhostPad(named: "sink", target: try naming.staticPad("sink"))
        return Parts(bin: bin, primer: primer, output: sink)
    }

    /// The view's pulsesink. pulsesink names its stream after the title tag ("Playback Stream" without one), so
    /// the bin's taginject gives every view's stream the view's name in pactl/pavucontrol. `server` is the daemon
    /// that answers now: its client name keeps the sink off a dead daemon's shared connection (`PulseConnectionName`).
    static func makePulseStream(_ configuration: PlayerConfiguration, device: String?,
                                server: PulseServerInstance.Presence) throws -> Element {
        // Before the view's sink can reach READY: its later NULL must never be the process's last (the keeper's doc).
        PulseMainLoopKeeper.ensure()
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

    /// The output while the PulseAudio stream is lost: the fake audio sink, named so that `output(of:)` finds it.
    static func makeLostOutput() throws -> Element {
        try PlayerPipelineBuilder.fakeAudioSink(name: lostOutputName)
    }

    /// Takes the bin's output out (to NULL, which also releases a streaming thread blocked in it) and puts
    /// `replacement` in its place, linked but held in NULL (locked state) so that the caller decides when it
    /// joins the pipeline's state (`join`). The bin's name and priming elements, and the probes on its ghost pad,
    /// stay.
    static func replaceOutput(of parts: inout Parts, with replacement: Element) throws {
        let old = parts.output
        old.setLockedState(true)
        do { try old.setState(.null) } catch {
            // A sink refusing NULL is still taken out: nothing of it is used again.
        }
        parts.primer.unlink(old)
        _ = parts.bin.remove(old)
        replacement.setLockedState(true)
        try parts.bin.add(replacement)
        parts.output = replacement
        try parts.primer.link(replacement)
    }

    /// Lets the new output follow the bin's state again and brings it there (PAUSED: it prerolls with the next
    /// flushing seek).
    static func join(_ output: Element) throws {
        output.setLockedState(false)
        try output.syncStateWithParent()
    }
}
