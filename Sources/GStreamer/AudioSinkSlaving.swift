import CGStreamer

/// What an audio sink that follows a foreign clock (`slave-method=custom`) reports on each rendered buffer.
public enum AudioSlavingObservation: Sendable, Equatable {
    /// How far the sink's playout is off the pipeline clock since its last calibration, in ns: internal (audio
    /// device) time minus external (pipeline clock) time. Positive: the device plays ahead of the clock.
    case skew(nanoseconds: Int64)
    /// The sink recalibrated (start of playback, flush, alignment resync, device reset): earlier skews no longer
    /// apply.
    case discontinuity(AudioDiscontinuityReason)
}

/// Why an audio sink recalibrated (`GstAudioBaseSinkDiscontReason`), so that a follower's restarts can be told
/// apart in its statistics and logs.
public enum AudioDiscontinuityReason: String, Sendable, Hashable, CaseIterable {
    case newCaps = "new-caps", flush, syncLatency = "sync-latency", alignment, deviceFailure = "device-failure"
    /// No reason given, but the sink passed no times to compare.
    case noTimes = "no-times"

    init(_ reason: GstAudioBaseSinkDiscontReason) {
        switch reason {
        case GST_AUDIO_BASE_SINK_DISCONT_REASON_NEW_CAPS: self = .newCaps
        case GST_AUDIO_BASE_SINK_DISCONT_REASON_FLUSH: self = .flush
        case GST_AUDIO_BASE_SINK_DISCONT_REASON_SYNC_LATENCY: self = .syncLatency
        case GST_AUDIO_BASE_SINK_DISCONT_REASON_ALIGNMENT: self = .alignment
        case GST_AUDIO_BASE_SINK_DISCONT_REASON_DEVICE_FAILURE: self = .deviceFailure
        default: self = .noTimes
        }
    }
}

extension Element {
    /// Makes this audio sink (a `GstAudioBaseSink`, e.g. pulsesink) follow the pipeline clock by a caller-chosen
    /// rule: `slave-method=custom`, and `decide` is called on the sink's streaming thread for every buffer it
    /// renders. `decide` returns by how many ns to move the playout pointer (the skew it wants removed, same sign
    /// as `.skew`), or 0 to leave it; a move applies from the buffer being rendered on (see the trampoline). The
    /// sink owns `decide` from then on and releases it when it is disposed or the callback is replaced. Throws when
    /// the element is not an audio base sink.
    public func setCustomAudioSlaving(_ decide: @escaping @Sendable (AudioSlavingObservation) -> Int64) throws {
        guard let sink = audioBaseSink(gobject) else { throw GStreamerError.notAnAudioSink(name) }
        try set("slave-method", fromString: "custom")
        let box = Unmanaged.passRetained(AudioSlavingHandler(decide)).toOpaque()
        gst_audio_base_sink_set_custom_slaving_callback(sink, AudioSlavingHandler.trampoline, box,
                                                        AudioSlavingHandler.destroy)
    }
}

/// `object` as an audio base sink (pulsesink, …: its C struct, for the fields and calls GStreamer's API does not
/// wrap), or nil when it is not one.
func audioBaseSink(_ object: UnsafeMutableRawPointer) -> UnsafeMutablePointer<GstAudioBaseSink>? {
    guard g_type_check_instance_is_a(object.assumingMemoryBound(to: GTypeInstance.self),
                                     gst_audio_base_sink_get_type()) != 0 else { return nil }
    return object.assumingMemoryBound(to: GstAudioBaseSink.self)
}

/// The Swift closure behind one sink's custom slaving callback (retained by the sink through its user data).
final class AudioSlavingHandler: Sendable {
    let decide: @Sendable (AudioSlavingObservation) -> Int64
    init(_ decide: @escaping @Sendable (AudioSlavingObservation) -> Int64) { self.decide = decide }

    static let trampoline: GstAudioBaseSinkCustomSlavingCallback = { sink, etime, itime, requestedSkew, reason, userData in
        guard let userData else { return }
        let handler = Unmanaged<AudioSlavingHandler>.fromOpaque(userData).takeUnretainedValue()
        // On a discontinuity the times are NONE and there is nothing to write the answer to.
        guard reason == GST_AUDIO_BASE_SINK_DISCONT_REASON_NO_DISCONT, let requestedSkew,
              etime != ClockTime.noneRawValue, itime != ClockTime.noneRawValue else {
            _ = handler.decide(.discontinuity(AudioDiscontinuityReason(reason)))
            return
        }
        let skew = Int64(bitPattern: UInt64(itime)) - Int64(bitPattern: UInt64(etime))
        let correction = handler.decide(.skew(nanoseconds: skew))
        requestedSkew.pointee = GstClockTimeDiff(correction)
        if correction != 0, let sink {
            // The move takes effect on this very buffer, not whenever audiobasesink's sample alignment lets it.
            // Without this, the sink keeps writing each buffer right after the previous one while the gap is under
            // its alignment threshold (40 ms): a first small step moved only the sink's calibration (so its reports
            // showed the step done) and the samples moved at the next step in the same direction, or never; a
            // larger move waited out `discont-wait` (1 s) and then came as an `alignment` discontinuity. "No
            // previous position" (-1) makes render place this buffer at its corrected position. Written on the
            // streaming thread, the only one that reads it during render.
            sink.pointee.next_sample = guint64.max
        }
    }

    static let destroy: GDestroyNotify = { userData in
        guard let userData else { return }
        Unmanaged<AudioSlavingHandler>.fromOpaque(userData).release()
    }
}
