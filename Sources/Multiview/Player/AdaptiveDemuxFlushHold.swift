import Foundation
import GStreamer
import Synchronization

/// Works around GStreamer 1.22.0's adaptivedemux2 aborting the whole process after a flushing seek (issue 15):
/// `download_request_set_uri: assertion failed: (request->in_use == FALSE)` on an "AdaptiveDemux" thread.
///
/// **The fault (gst-plugins-good 1.22.0, fixed upstream in 1.22.7 by "adaptivedemux2: Do not submit_transfer when
/// cancelled").** A demuxer stream hands each download to its download helper's own thread through a queue; that
/// thread takes it from the queue a moment later (an idle callback) and only then lists it as active. A flushing
/// seek stops every stream (`gst_adaptive_demux2_stream_stop`): it cancels the stream's request and replaces it by
/// a fresh one. A request still waiting in the queue is not listed yet, so nothing is cancelled: the helper's
/// thread submits it afterwards, downloads it, and reports it complete to the restarted stream, which then starts
/// its next download on its *current* request — still in flight — and asserts. The window is the helper thread's
/// wake-up latency right after a fragment finished (or a stream started); on two loaded cores that is long enough
/// to be hit by a few seeks in a hundred.
///
/// **The workaround.** adaptivedemux2 handles a seek with its scheduler paused (no new download can be queued) and
/// pushes FLUSH_START out of its source pads *before* it stops the streams. A probe on those pads holds the
/// seeking thread there for `hold`: the helper's thread then takes whatever is still queued and lists it as
/// active, so the stop that follows cancels it like any running download. Only one pad per seek waits (the
/// others' FLUSH_STARTs of the same seek pass at once). Costs `hold` per seek of an adaptive (HLS) view.
/// Remove it once the platform has gst-plugins-good 1.22.7 or later.
///
/// Threading: `watch` runs on the streaming thread that adds the demuxer, the pad-added handler on the thread that
/// exposes a pad, the probe on the seeking thread (the player's executor queue, never Swift's cooperative pool).
/// One `Mutex` owns the connections, the probes and the last seek held, another the holds done; nothing sleeps
/// under either.
final class AdaptiveDemuxFlushHold: Sendable {
    /// How long a seek waits at the demuxer's FLUSH_START. The helper thread needs one wake-up (microseconds idle,
    /// a few milliseconds on two loaded cores); this leaves a wide margin and stays small next to an HLS view's
    /// seek (a fragment download, hundreds of milliseconds).
    static let hold: Duration = .milliseconds(30)

    private struct Demuxer {
        var padAdded: SignalConnection?
        var padRemoved: SignalConnection?
        var probes: [UInt: PadProbe] = [:]
        /// The sequence number of the last seek held (its FLUSH_START comes out of every source pad in turn).
        var heldSeek: UInt32?
    }
    private let demuxers = Mutex<[UInt: Demuxer]>([:])
    /// How long each hold actually kept its seek at the demuxer, oldest first (the last 64): what shows, without
    /// racing for the rare abort, that every seek of an adaptive view was held once and long enough.
    private let holdsDone = Mutex<[Duration]>([])
    /// See `holdsDone`.
    var holds: [Duration] { holdsDone.withLock { $0 } }
    /// playbin3's "deep-element-added" / "deep-element-removed", connected by `init`.
    private let pipelineConnections = Mutex<[SignalConnection]>([])

    /// Guards every adaptive demuxer `pipeline` (a view's playbin3) creates from now on.
    init(watching pipeline: Element) throws {
        let added = try pipeline.connect("deep-element-added") { [weak self] args in
            if let self, let element = args.element(at: 2), Self.applies(to: element) { self.watch(element) }
        }
        let removed = try pipeline.connect("deep-element-removed") { [weak self] args in
            if let self, let element = args.element(at: 2) { self.forget(element) }
        }
        pipelineConnections.withLock { $0 = [added, removed] }
    }

    /// Whether `element` is one of the adaptivedemux2 demuxers this guards.
    static func applies(to element: Element) -> Bool {
        ["hlsdemux2", "dashdemux2", "mssdemux2"].contains(element.factoryName ?? "")
    }

    /// Guards `demuxer`: every source pad it exposes gets the FLUSH_START hold.
    private func watch(_ demuxer: Element) {
        let key = UInt(bitPattern: demuxer.gobject)
        let added = try? demuxer.connect("pad-added") { [weak self] args in
            guard let self, let pad = args.pad(at: 1) else { return }
            self.probe(pad, of: key)
        }
        let removed = try? demuxer.connect("pad-removed") { [weak self] args in
            guard let self, let pad = args.pad(at: 1) else { return }
            // Released outside the lock: removing a probe may wait for the pad's streaming thread.
            let probe = self.demuxers.withLock { $0[key]?.probes.removeValue(forKey: UInt(bitPattern: pad.gobject)) }
            _ = probe
        }
        demuxers.withLock { $0[key] = Demuxer(padAdded: added, padRemoved: removed) }
    }

    /// Forgets `element` when it was a guarded demuxer.
    private func forget(_ element: Element) {
        let gone = demuxers.withLock { $0.removeValue(forKey: UInt(bitPattern: element.gobject)) }
        _ = gone
    }

    private func probe(_ pad: Pad, of key: UInt) {
        let probe = pad.addProbe([.eventDownstream, .eventFlush]) { [weak self] info in
            if info.eventName == "flush-start", let self { self.holdOnce(key, seek: info.eventSeqnum) }
            return .ok
        }
        let replaced = demuxers.withLock { state -> PadProbe? in
            guard state[key] != nil else { return probe }
            return state[key]?.probes.updateValue(probe, forKey: UInt(bitPattern: pad.gobject))
        }
        _ = replaced
    }

    /// Holds the seeking thread once per seek (the first of its FLUSH_STARTs).
    private func holdOnce(_ key: UInt, seek: UInt32?) {
        let wait = demuxers.withLock { state -> Bool in
            if let seek, state[key]?.heldSeek == seek { return false }
            state[key]?.heldSeek = seek
            return true
        }
        guard wait else { return }
        let (seconds, attoseconds) = Self.hold.components
        let began = ContinuousClock.now
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        let held = ContinuousClock.now - began
        holdsDone.withLock { $0 = Array(($0 + [held]).suffix(64)) }
    }
}
