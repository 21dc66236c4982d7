/// The figures a sync report publishes: skew statistics per phase and over the whole run.
///
/// All skews are in milliseconds in these types (nanoseconds in `SkewSample`). A statistic over zero samples is
/// `nil`, and is written as an explicit JSON `null` (never omitted), so `summary.json` always has every key.

/// Nearest-rank statistics over a set of skew samples.
///
/// - `frames`: number of samples (compared frame groups).
/// - `p50Ms`, `p99Ms`: nearest-rank percentiles of the sorted samples: the value of rank ⌈p/100 · n⌉ (1-based,
///   clamped to 1…n). `nil` when there are no samples.
/// - `maxMs`: the largest sample, `nil` when there are none.
public struct SkewStatistics: Codable, Sendable, Equatable {
    public var frames: Int
    public var p50Ms: Double?
    public var p99Ms: Double?
    public var maxMs: Double?

    public init(frames: Int, p50Ms: Double?, p99Ms: Double?, maxMs: Double?) {
        self.frames = frames; self.p50Ms = p50Ms; self.p99Ms = p99Ms; self.maxMs = maxMs
    }

    /// Statistics of skew samples given in nanoseconds (any order).
    public init(skewsNs: [UInt64]) {
        let sortedMs = skewsNs.sorted().map { Double($0) / 1e6 }
        self.init(frames: sortedMs.count,
                  p50Ms: Self.nearestRank(sortedMs, percent: 50),
                  p99Ms: Self.nearestRank(sortedMs, percent: 99),
                  maxMs: sortedMs.last)
    }

    /// Nearest-rank percentile of an ascending list: the element of 1-based rank ⌈percent/100 · n⌉, clamped to
    /// 1…n. `nil` for an empty list.
    public static func nearestRank<T>(_ sorted: [T], percent: Double) -> T? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    private enum CodingKeys: String, CodingKey { case frames, p50Ms, p99Ms, maxMs }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(frames, forKey: .frames)
        try c.encode(p50Ms, forKey: .p50Ms)
        try c.encode(p99Ms, forKey: .p99Ms)
        try c.encode(maxMs, forKey: .maxMs)
    }
}

/// The figures of one script phase.
///
/// JSON keys: `index`, `name`, `views`, `frames`, `p50_skew_ms`, `p99_skew_ms`, `max_skew_ms`,
/// `time_to_aligned_ms`.
/// - `views`: distinct views with at least one frame record in the phase (whatever their item).
/// - `frames`: compared frame groups in the phase (see `SyncAnalyzer`).
/// - `timeToAlignedMs`: the first clock time ≥ the phase's command time at which all the phase's compared views
///   have rendered the same frame index, minus the command time (see `SyncAnalyzer`); `nil` when never.
/// - `slowestFirstFrameMs` (`slowest_first_frame_ms`): for each view with records in the phase, the time from its
///   command to its first render after it; the largest of those, ms; `nil` without such renders. In a baseline
///   run (independent players, each sent its own seek in turn) this is the slowest single view's own
///   seek → first frame in the same invocation, the yardstick of a coordinated seek's time to aligned.
public struct PhaseSummary: Codable, Sendable, Equatable {
    public var index: Int
    public var name: String
    public var views: Int
    public var frames: Int
    public var p50SkewMs: Double?
    public var p99SkewMs: Double?
    public var maxSkewMs: Double?
    public var timeToAlignedMs: Double?
    public var slowestFirstFrameMs: Double?

    public init(index: Int, name: String, views: Int, frames: Int, p50SkewMs: Double?, p99SkewMs: Double?,
                maxSkewMs: Double?, timeToAlignedMs: Double?, slowestFirstFrameMs: Double? = nil) {
        self.index = index; self.name = name; self.views = views; self.frames = frames
        self.p50SkewMs = p50SkewMs; self.p99SkewMs = p99SkewMs; self.maxSkewMs = maxSkewMs
        self.timeToAlignedMs = timeToAlignedMs; self.slowestFirstFrameMs = slowestFirstFrameMs
    }

    /// The phase's skew figures as `SkewStatistics`.
    public var statistics: SkewStatistics {
        SkewStatistics(frames: frames, p50Ms: p50SkewMs, p99Ms: p99SkewMs, maxMs: maxSkewMs)
    }

    private enum CodingKeys: String, CodingKey {
        case index, name, views, frames
        case p50SkewMs = "p50_skew_ms", p99SkewMs = "p99_skew_ms", maxSkewMs = "max_skew_ms"
        case timeToAlignedMs = "time_to_aligned_ms"
        case slowestFirstFrameMs = "slowest_first_frame_ms"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        index = try c.decode(Int.self, forKey: .index)
        name = try c.decode(String.self, forKey: .name)
        views = try c.decode(Int.self, forKey: .views)
        frames = try c.decode(Int.self, forKey: .frames)
        p50SkewMs = try c.decodeIfPresent(Double.self, forKey: .p50SkewMs)
        p99SkewMs = try c.decodeIfPresent(Double.self, forKey: .p99SkewMs)
        maxSkewMs = try c.decodeIfPresent(Double.self, forKey: .maxSkewMs)
        timeToAlignedMs = try c.decodeIfPresent(Double.self, forKey: .timeToAlignedMs)
        slowestFirstFrameMs = try c.decodeIfPresent(Double.self, forKey: .slowestFirstFrameMs)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(name, forKey: .name)
        try c.encode(views, forKey: .views)
        try c.encode(frames, forKey: .frames)
        try c.encode(p50SkewMs, forKey: .p50SkewMs)      // nil → null, never omitted
        try c.encode(p99SkewMs, forKey: .p99SkewMs)
        try c.encode(maxSkewMs, forKey: .maxSkewMs)
        try c.encode(timeToAlignedMs, forKey: .timeToAlignedMs)
        try c.encode(slowestFirstFrameMs, forKey: .slowestFirstFrameMs)
    }
}

/// The content of `summary.json`: one run's figures.
///
/// JSON keys: `mode` ("coordinated" or "baseline"), `views` (distinct views in the run), `frames` (compared frame
/// groups over the whole run), `p50_skew_ms`, `p99_skew_ms`, `max_skew_ms` (over all samples of the run),
/// `phases` (one `PhaseSummary` per phase, by index). The individual samples are not part of it.
public struct SyncSummary: Codable, Sendable, Equatable {
    public var mode: String
    public var views: Int
    public var frames: Int
    public var p50SkewMs: Double?
    public var p99SkewMs: Double?
    public var maxSkewMs: Double?
    public var phases: [PhaseSummary]

    public init(mode: String, views: Int, frames: Int, p50SkewMs: Double?, p99SkewMs: Double?, maxSkewMs: Double?,
                phases: [PhaseSummary]) {
        self.mode = mode; self.views = views; self.frames = frames
        self.p50SkewMs = p50SkewMs; self.p99SkewMs = p99SkewMs; self.maxSkewMs = maxSkewMs
        self.phases = phases
    }

    /// The run's skew figures as `SkewStatistics`.
    public var statistics: SkewStatistics {
        SkewStatistics(frames: frames, p50Ms: p50SkewMs, p99Ms: p99SkewMs, maxMs: maxSkewMs)
    }

    private enum CodingKeys: String, CodingKey {
        case mode, views, frames, phases
        case p50SkewMs = "p50_skew_ms", p99SkewMs = "p99_skew_ms", maxSkewMs = "max_skew_ms"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mode = try c.decode(String.self, forKey: .mode)
        views = try c.decode(Int.self, forKey: .views)
        frames = try c.decode(Int.self, forKey: .frames)
        p50SkewMs = try c.decodeIfPresent(Double.self, forKey: .p50SkewMs)
        p99SkewMs = try c.decodeIfPresent(Double.self, forKey: .p99SkewMs)
        maxSkewMs = try c.decodeIfPresent(Double.self, forKey: .maxSkewMs)
        phases = try c.decode([PhaseSummary].self, forKey: .phases)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encode(views, forKey: .views)
        try c.encode(frames, forKey: .frames)
        try c.encode(p50SkewMs, forKey: .p50SkewMs)      // nil → null, never omitted
        try c.encode(p99SkewMs, forKey: .p99SkewMs)
        try c.encode(maxSkewMs, forKey: .maxSkewMs)
        try c.encode(phases, forKey: .phases)
    }
}
