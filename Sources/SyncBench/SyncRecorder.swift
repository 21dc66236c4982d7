import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import Synchronization

/// Records, for every video frame every view renders, the clock time of the render and the frame's media
/// time. It listens to fakesink's "handoff", which fires inside the sink's render call, after the sink has
/// waited for the frame's clock time — so the recorded time is when the frame was actually presented.
///
/// Phases and timelines: a frame belongs to the timeline it was rendered on. After a command that flushes
/// (seek, rate change) a view keeps rendering its old timeline until its flushing seek reaches the sink; those
/// frames are still the previous phase's (they were shown while the old state held). So `setPhase(_:untilNewSegment:
/// true)` moves each view into the new phase only when its sink sees the next segment event — the first thing
/// the new timeline delivers. Without this, a view that rendered a few frames past the seek target before
/// pausing would be compared, frame for frame, with the others' frames of the new timeline.
///
/// Threading: handoffs and segment events arrive on each view's streaming thread; the records, the phases and
/// rates live in one `Mutex`. With an `output` (`play --sync-log`: a long run) the records are handed to it
/// instead of kept: `frames` then stays empty.
public final class SyncRecorder: Sendable {
    private struct State {
        var frames: [FrameRecord] = []
        /// The phase the last command started.
        var phase = 0
        /// The phase each view's frames are recorded in (lags `phase` until the view's new segment arrives).
        var viewPhases: [Int: Int] = [:]
        /// Views whose next segment event moves them into `phase` (at `pendingRate` when set).
        var awaitingSegment: Set<Int> = []
        var pendingRate: Double?
        var rates: [Int: Double] = [:]
        var items: [Int: String] = [:]
        /// Labels that take effect at the view's next segment event (`setItem(_:view:fromNextSegment:)`).
        var itemsFromNextSegment: [Int: String] = [:]
        /// Views whose rate is taken from their next segment event (`setRateFromNextSegment(view:)`).
        var ratesFromNextSegment: Set<Int> = []
        /// Each view's current segment start while playing forward (see `presentedMediaTime`).
        var segmentStarts: [Int: ClockTime] = [:]
        /// Each view's current segment's stream time at its start (`followsSegments`).
        var segmentTimes: [Int: ClockTime] = [:]
    }
    private let state = Mutex(State())
    private let connections = Mutex<[Int: (handoff: SignalConnection, segments: PadProbe)]>([:])
    /// The clock a render is timed on, read at each frame: a group session's member moves its views to a new net
    /// clock when its host comes back, and a frame must be timed on the clock it was placed on. Timed on the first
    /// link's clock — whose provider had died, so it ran on from its last calibration — a member's frames drifted
    /// away from the returned host's by that calibration's rate error (HostReturnTests: 17 ms after ~15 s, under
    /// load), while the views themselves were aligned.
    private let clockSource: @Sendable () -> Clock
    /// The clock renders are timed on now.
    public var clock: Clock { clockSource() }
    private let output: (any FrameRecordOutput)?
    /// For `play`, where nobody scripts phases or rates: every segment event sets its view's rate, and a frame's
    /// media time is its stream time (segment time + PTS − segment start), the position the player reports. HLS
    /// and local views play together there, and hlsdemux2 keeps the TS timestamps (PTS 62 s at position 0 with
    /// our fixture), so their PTS could not be compared with a file's.
    private let followsSegments: Bool

    public convenience init(clock: Clock, output: (any FrameRecordOutput)? = nil, followsSegments: Bool = false) {
        self.init(clockSource: { clock }, output: output, followsSegments: followsSegments)
    }

    /// Times renders on whatever clock `clockSource` returns at each frame (the current clock of a member's link).
    public init(clockSource: @escaping @Sendable () -> Clock, output: (any FrameRecordOutput)? = nil,
                followsSegments: Bool = false) {
        self.clockSource = clockSource; self.output = output; self.followsSegments = followsSegments
    }

    /// Starts recording a headless view (its video sink must be a fakesink). Throws when it is not.
    public func attach(_ player: Player, item: String) throws {
        guard let sink = player.videoSink() else { throw GStreamerError.missingElement(factory: "video-sink") }
        guard sink.factoryName == "fakesink" else {
            throw GStreamerError.missingElement(factory: "fakesink (sync-report needs headless views)")
        }
        try sink.set("signal-handoffs", true)
        let view = player.view.number
        let clockSource = self.clockSource
        state.withLock { s in
            s.items[view] = item
            s.rates[view] = s.rates[view] ?? 1.0
            s.viewPhases[view] = s.phase   // a view attached now starts in the current phase
        }
        let output = self.output, follows = self.followsSegments
        let handoff = try sink.connect("handoff") { [weak self] args in
            let now = clockSource().time
            guard let self, let pts = args.bufferTimestamp(at: 1) else { return }
            let record = self.state.withLock { s -> FrameRecord? in
                var media = SyncRecorder.presentedMediaTime(pts: pts, segmentStart: s.segmentStarts[view])
                if follows { media = SyncRecorder.streamTime(of: media, segmentStart: s.segmentStarts[view],
                                                              segmentTime: s.segmentTimes[view]) }
                let record = FrameRecord(view: view, mediaTimeNs: media.nanoseconds, renderClockNs: now.nanoseconds,
                                         rate: s.rates[view] ?? 1.0, phase: s.viewPhases[view] ?? s.phase,
                                         item: s.items[view] ?? "")
                guard output != nil else { s.frames.append(record); return nil }
                return record
            }
            if let record { output?.record(record) }
        }
        let segments = try sink.staticPad("sink").addProbe(.eventDownstream) { [weak self] info in
            guard let self, info.eventName == "segment" else { return .ok }
            self.state.withLock { s in
                s.segmentStarts[view] = (info.segmentRate ?? 1) > 0 ? info.segmentStart : nil
                if follows, let rate = info.segmentRate { s.rates[view] = rate }
                if follows { s.segmentTimes[view] = (info.segmentRate ?? 1) > 0 ? info.segmentTime : nil }
                if let item = s.itemsFromNextSegment.removeValue(forKey: view) { s.items[view] = item }
                if s.ratesFromNextSegment.remove(view) != nil, let rate = info.segmentRate { s.rates[view] = rate }
                guard s.awaitingSegment.remove(view) != nil else { return }
                s.viewPhases[view] = s.phase
                if let rate = s.pendingRate ?? info.segmentRate { s.rates[view] = rate }
            }
            return .ok
        }
        connections.withLock { $0[view] = (handoff, segments) }
    }

    /// The media time a frame is presented from: its PTS, or the segment start when the frame begins before it
    /// (a sink synchronises such a frame on the clipped start). With our files the decoders already stamp the
    /// first frame after an accurate seek with the segment start (`SyncRecorderTests` passes with this rule
    /// disabled), so here it changes nothing; it keeps the record honest with elements that leave the PTS as
    /// it is. Forward playback only: backwards, sinks sync on the stop.
    static func presentedMediaTime(pts: ClockTime, segmentStart: ClockTime?) -> ClockTime {
        guard let segmentStart, segmentStart > pts else { return pts }
        return segmentStart
    }

    /// Stream time of a presented media time (forward playback): segment time + (media − segment start); the
    /// media time itself when the segment gives no start or time.
    static func streamTime(of media: ClockTime, segmentStart: ClockTime?, segmentTime: ClockTime?) -> ClockTime {
        guard let segmentStart, let segmentTime, media >= segmentStart else { return media }
        return segmentTime + (media - segmentStart)
    }

    public func detach(view: Int) { _ = connections.withLock { $0.removeValue(forKey: view) } }
    public func detachAll() { connections.withLock { $0.removeAll() } }

    /// Starts a phase. With `untilNewSegment`, each attached view enters it when its next segment event arrives
    /// (the command flushes every view); otherwise all views enter it now.
    public func setPhase(_ phase: Int, untilNewSegment: Bool = false) {
        state.withLock { s in
            s.phase = phase
            s.pendingRate = nil
            if untilNewSegment {
                s.awaitingSegment = Set(s.viewPhases.keys)
            } else {
                s.awaitingSegment = []
                for view in s.viewPhases.keys { s.viewPhases[view] = phase }
            }
        }
    }
    /// Marks what a view plays from now on; a suspended view is marked apart so it is not compared with the
    /// group while it is detached on purpose.
    public func setItem(_ item: String, view: Int) {
        state.withLock { s in
            s.items[view] = item
            s.itemsFromNextSegment[view] = nil
        }
    }
    /// Marks what a view plays from its next segment event on: the first frame of the flushing seek that is about
    /// to come (a suspended view rejoining its group) is the first one marked, wherever the call that causes it
    /// returns. Marking it after that call returned labelled the rejoined view's first frames as its own content
    /// whenever the group had already started by then (`SuspensionTests`' first-render check, 1 run in 3–5).
    public func setItem(_ item: String, view: Int, fromNextSegment: Bool) {
        guard fromNextSegment else { return setItem(item, view: view) }
        state.withLock { $0.itemsFromNextSegment[view] = item }
    }
    /// Takes the view's rate from its next segment event (the rate it rejoins its group at), for the same reason.
    public func setRateFromNextSegment(view: Int) { state.withLock { _ = $0.ratesFromNextSegment.insert(view) } }
    public func setRate(_ rate: Double, view: Int) { state.withLock { $0.rates[view] = rate } }
    /// Sets every view's rate: at once for views already in the current phase, at their new segment for views
    /// still awaiting it.
    public func setRate(_ rate: Double) {
        state.withLock { s in
            s.pendingRate = rate
            for view in s.rates.keys where !s.awaitingSegment.contains(view) { s.rates[view] = rate }
        }
    }

    public var frames: [FrameRecord] { state.withLock { $0.frames } }
    /// The first frame recorded in `phase`, without copying the records (a copy taken while views record would
    /// make their next append copy the whole array inside the lock, on a streaming thread).
    public func firstFrame(inPhase phase: Int) -> FrameRecord? {
        state.withLock { s in s.frames.first(where: { $0.phase == phase }) }
    }
    public var frameCount: Int { state.withLock { $0.frames.count } }
}

/// Where a `SyncRecorder` hands each frame record when it does not keep them (`SyncLogWriter`). Called on the
/// views' streaming threads, inside their render call: it must only hand the record over.
public protocol FrameRecordOutput: Sendable {
    func record(_ frame: FrameRecord)
}
