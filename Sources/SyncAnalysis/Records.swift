/// What the sync recorder captures, and what the analysis reads. Times are nanoseconds on the coordination
/// clock (the shared pipeline clock), so records from different views compare directly.

/// One video frame as it was rendered by one view.
public struct FrameRecord: Sendable, Codable, Equatable {
    /// 1-based view number.
    public var view: Int
    /// The frame's media time (buffer PTS, stream time), ns.
    public var mediaTimeNs: UInt64
    /// Clock time at which the sink rendered it (taken in the sink's render callback, after its clock wait), ns.
    public var renderClockNs: UInt64
    /// Playback rate in force when it was rendered (to compare media-time differences in clock time).
    public var rate: Double
    /// Index of the script phase in force when it was rendered.
    public var phase: Int
    /// The item the view was playing (views on other items are never compared).
    public var item: String

    public init(view: Int, mediaTimeNs: UInt64, renderClockNs: UInt64, rate: Double, phase: Int, item: String) {
        self.view = view; self.mediaTimeNs = mediaTimeNs; self.renderClockNs = renderClockNs
        self.rate = rate; self.phase = phase; self.item = item
    }
}

/// One step of a sync-report script ("seek +10", "rate 2.0", "late join", …).
public struct PhaseRecord: Sendable, Codable, Equatable {
    public var index: Int
    /// The action as written in the script.
    public var name: String
    /// Clock time at which the command was issued, ns.
    public var commandClockNs: UInt64
    /// Clock time at which the phase ended (next command or end of run), ns.
    public var endClockNs: UInt64
    /// Coordinated runs: the slowest view's own seek+preroll inside the group for this phase's command (command
    /// to ready), ms; nil when the phase ran no barrier.
    public var slowestPrepareMs: Double?
    /// Coordinated runs: the start margin the medium added after every view was ready, ms.
    public var startMarginMs: Double?
    /// Coordinated runs: how long before the instant every view's sinks had been started, ms (the
    /// margin's unused part; nil when no view had a prepared start).
    public var startLeadMs: Double?
    /// Coordinated runs: how long handing "play at C" to every view took, ms, answers included (each view's
    /// own bookkeeping; its sinks were started before, see `startLeadMs`).
    public var startFanoutMs: Double?
    /// Coordinated runs: views that missed the start instant and were caught up (prepared again, started later).
    public var missedStart: Int?
    /// Baseline runs: when each view got its own command, ns, keyed by view number ("1", "2", …). The baseline
    /// hands a seek to one independent player after another (without waiting for the previous one), so a view's
    /// own seek → first frame counts from here, not from `commandClockNs`. Nil or no entry for a view: that
    /// view at `commandClockNs`.
    public var viewCommandClockNs: [String: UInt64]?
    /// Seeks: the media time every view was sent to, ns (the coordinated run's target; the baseline run sends
    /// its views to the same one, so both decode the same frames).
    public var seekTargetNs: UInt64?

    public init(index: Int, name: String, commandClockNs: UInt64, endClockNs: UInt64,
                slowestPrepareMs: Double? = nil, startMarginMs: Double? = nil) {
        self.index = index; self.name = name; self.commandClockNs = commandClockNs; self.endClockNs = endClockNs
        self.slowestPrepareMs = slowestPrepareMs; self.startMarginMs = startMarginMs
    }
}
