import CGStreamer
import Glibc
import Synchronization

/// Gives an audio sink's slaving reports the playout PulseAudio's server itself reports, instead of the one
/// libpulse's smoother makes of it (see `PulsePlayoutEstimator` for why the smoother is off by up to 20 ms).
///
/// How the server's snapshots are reached: pulsesink keeps its `pa_stream` and PulseAudio's mainloop private, but
/// logs every timing update it receives (`gst_pulsering_stream_latency_cb`: server instant, read index, sink
/// latency) at LOG level on its `pulse` debug category, on PulseAudio's thread. The tap raises that category to LOG
/// and reads those lines through a GStreamer log function (public API); the same function passes every other line
/// on to GStreamer's default output exactly as the user's GST_DEBUG asked, so nothing more is printed.
/// (GST_DEBUG_FILE set: the default output cannot be passed on to that file, so no tap is made and the reports stay
/// libpulse's.)
///
/// Each slaving report's skew (internal − external time) is corrected by the smoother's error at that instant:
/// the sink's clock reading now (libpulse's smoothed stream time) minus the stream time the server's snapshots put
/// at now. Until the snapshots since the sink's last discontinuity agree (the first ~20-40 ms of a stream), a
/// report passes unchanged.
///
/// Threading: `snapshot` runs on PulseAudio's mainloop thread (from the log function), `correct` on the sink's
/// streaming thread; the estimator and statistics are in one `Mutex`. The process-wide registry of taps (by sink
/// address) is in another.
public final class PulseTimingTap: Sendable {
    public struct Statistics: Sendable, Equatable {
        /// Server snapshots taken in.
        public var snapshots = 0
        /// Reports corrected, and reports passed unchanged for want of agreeing snapshots.
        public var corrected = 0
        public var uncorrected = 0
        /// libpulse's smoothed stream time minus the server's, at the last corrected report (ns).
        public var lastSmootherError: Int64 = 0
    }

    private struct State {
        var estimator = PulsePlayoutEstimator()
        var statistics = Statistics()
    }

    private let state = Mutex(State())
    /// The sink. A raw address: the tap is owned by the sink's slaving callback (so the sink outlives every call
    /// of `correct`) and only its address is compared on PulseAudio's thread.
    private nonisolated(unsafe) let sink: UnsafeMutablePointer<GstAudioBaseSink>

    private init(sink: UnsafeMutablePointer<GstAudioBaseSink>) { self.sink = sink }

    deinit { PulseTimingLog.unregister(UInt(bitPattern: sink)) }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Makes a tap for `element` (a pulsesink), or nil where the server's snapshots cannot be read (not an audio
    /// base sink; GStreamer's debug log writes to a file; no `pulse` debug category).
    public static func make(for element: Element) -> PulseTimingTap? {
        guard let sink = audioBaseSink(element.gobject), PulseTimingLog.installed else { return nil }
        let tap = PulseTimingTap(sink: sink)
        PulseTimingLog.register(tap, for: UInt(bitPattern: tap.sink))
        return tap
    }

    /// A server snapshot for this tap's sink (PulseAudio's thread).
    fileprivate func snapshot(_ snapshot: PulsePlayoutEstimator.Snapshot) {
        state.withLock {
            $0.estimator.add(snapshot)
            $0.statistics.snapshots += 1
        }
    }

    /// The report with its skew measured against the server's playout (the sink's streaming thread).
    public func correct(_ observation: AudioSlavingObservation) -> AudioSlavingObservation {
        switch observation {
        case .discontinuity:
            let now = Self.serverNow()
            state.withLock { $0.estimator.restart(at: now) }
            return observation
        case .skew(let skew):
            guard let clock = sink.pointee.provided_clock, let ringbuffer = sink.pointee.ringbuffer else {
                return observation
            }
            let bytesPerSecond = Int64(ringbuffer.pointee.spec.info.rate) * Int64(ringbuffer.pointee.spec.info.bpf)
            let audioClock = UnsafeMutableRawPointer(clock).assumingMemoryBound(to: GstAudioClock.self)
            let smoothed = gst_audio_clock_get_time(audioClock)
            let now = Self.serverNow()
            return state.withLock { state in
                guard smoothed != ClockTime.noneRawValue,
                      let served = state.estimator.streamTime(at: now, bytesPerSecond: bytesPerSecond) else {
                    state.statistics.uncorrected += 1
                    return observation
                }
                let error = Int64(bitPattern: UInt64(smoothed)) - served
                state.statistics.corrected += 1
                state.statistics.lastSmootherError = error
                return .skew(nanoseconds: skew - error)
            }
        }
    }

    /// The clock the server stamps its snapshots with (it shares the machine: CLOCK_REALTIME, as gettimeofday).
    static func serverNow() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

/// The process-wide GStreamer log function behind every `PulseTimingTap`, and the taps by sink address.
enum PulseTimingLog {
    private struct Entry { weak var tap: PulseTimingTap? }
    private static let taps = Mutex<[UInt: Entry]>([:])

    /// What the user's GST_DEBUG asked of the `pulse` category (raw `GstDebugLevel`), and the category's address.
    private struct Installation: Sendable {
        let category: UInt
        let userThreshold: UInt32
    }

    /// Installed once, on first use (after a pulsesink exists: its plugin registers the category).
    private static let installation: Installation? = {
        if let file = getenv("GST_DEBUG_FILE"), file.pointee != 0 { return nil }
        guard let category = _gst_debug_get_category("pulse") else { return nil }
        let userThreshold = gst_debug_category_get_threshold(category)
        if userThreshold.rawValue < GST_LEVEL_LOG.rawValue {
            gst_debug_category_set_threshold(category, GST_LEVEL_LOG)
        }
        gst_debug_remove_log_function(gst_debug_log_default)
        gst_debug_add_log_function(logFunction, nil, nil)
        return Installation(category: UInt(bitPattern: category), userThreshold: userThreshold.rawValue)
    }()

    static var installed: Bool { installation != nil }

    static func register(_ tap: PulseTimingTap, for sink: UInt) {
        taps.withLock { $0[sink] = Entry(tap: tap) }
    }

    /// Called from a tap's deinit: its entry is gone unless a newer tap of the same sink took its place.
    static func unregister(_ sink: UInt) {
        taps.withLock { taps in
            if let entry = taps[sink], entry.tap == nil { taps.removeValue(forKey: sink) }
        }
    }

    /// The function that pulsesink logs each timing update from.
    private static let timingFunction = "gst_pulsering_stream_latency_cb"

    private static let logFunction: GstLogFunction = { category, level, file, function, line, object, message, _ in
        if let installation, UInt(bitPattern: category) == installation.category {
            if level == GST_LEVEL_LOG, let function, let object, let message,
               timingFunction.withCString({ strcmp(function, $0) }) == 0,
               let tap = taps.withLock({ $0[UInt(bitPattern: object)]?.tap }),
               let text = gst_debug_message_get(message), let snapshot = parse(String(cString: text)) {
                tap.snapshot(snapshot)
            }
            // Raised for the tap only: what the user did not ask for is not printed.
            guard level.rawValue <= installation.userThreshold else { return }
        }
        gst_debug_log_default(category, level, file, function, line, object, message, nil)
    }

    /// "latency_update, TIMESTAMP_NS, WCORRUPT:WINDEX, RCORRUPT:RINDEX, SINK_USEC, CONFIGURED_SINK_USEC" (GStreamer
    /// 1.22's pulsesink). Nil for any other text, or a read index libpulse marks corrupt.
    static func parse(_ text: String) -> PulsePlayoutEstimator.Snapshot? {
        let fields = text.split(separator: ",").map { $0.trimmingCharacters(in: " ") }
        guard fields.count == 6, fields[0] == "latency_update", let timestamp = Int64(fields[1]),
              let sinkLatency = Int64(fields[4]) else { return nil }
        let read = fields[3].split(separator: ":")
        guard read.count == 2, read[0] == "0", let readIndex = Int64(read[1]) else { return nil }
        return PulsePlayoutEstimator.Snapshot(serverTime: timestamp, readIndex: readIndex,
                                              sinkLatencyMicroseconds: sinkLatency)
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var result = self
        while result.first == set { result = result.dropFirst() }
        while result.last == set { result = result.dropLast() }
        return result
    }
}
