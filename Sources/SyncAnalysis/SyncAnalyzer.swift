/// One skew sample: a frame rendered by two or more views of the same item in the same phase.
public struct SkewSample: Codable, Sendable, Equatable {
    /// Earliest (raw) render clock time among the group's records, ns.
    public var clockNs: UInt64
    /// Spread of the group's aligned render times (max − min), ns.
    public var skewNs: UInt64
    /// Index of the phase the group belongs to.
    public var phase: Int

    public init(clockNs: UInt64, skewNs: UInt64, phase: Int) {
        self.clockNs = clockNs; self.skewNs = skewNs; self.phase = phase
    }
}

/// What `SyncAnalyzer.analyze` returns: the published summary and the individual samples (for plots and dumps).
public struct SyncAnalysisResult: Sendable, Equatable {
    public var summary: SyncSummary
    /// Every skew sample of the run, in ascending `clockNs` order.
    public var samples: [SkewSample]
    /// The frame rate the records were indexed with.
    public var fps: Double

    public init(summary: SyncSummary, samples: [SkewSample], fps: Double) {
        self.summary = summary; self.samples = samples; self.fps = fps
    }
}

/// Turns per-frame render records into skew figures.
///
/// Definitions (all per record, `fps` given, 30 by default):
/// - **frame index** = round(mediaTimeNs · fps / 1e9).
/// - **aligned render time** = renderClockNs − (mediaTimeNs − frameIndex · 1e9 / fps) / rate. This removes the
///   containers' timestamp quantization (WebM's 1 ms timestamps: 33 ms, 67 ms… against MP4's exact 33.333… ms):
///   two views presenting the same frame at the same instant get the same aligned time even though their PTS
///   differ by a fraction of a millisecond. A rate of 0 or not finite counts as 1.
///
/// Grouping, for each phase and each item separately:
/// - Each view's records (in render-clock order) are split into **passes**: a new pass starts whenever the frame
///   index goes backwards against the playback direction (lower than the previous one at a positive rate, higher
///   at a negative rate), as after a backward seek within the phase. The k-th pass of view A is compared with the
///   k-th pass of view B. Should a view render the same frame index twice within one pass, its first render
///   counts.
/// - Records are grouped by (frame index, pass). A group holding two or more views is one **compared frame
///   group** and gives one **skew sample**: max − min of the aligned render times of its views, ns; its
///   timestamp is the earliest raw render time of the group. Views on different items are never compared.
///
/// Figures:
/// - per phase and over the whole run: `frames` (number of samples), nearest-rank p50/p99 and max skew in ms
///   (`nil`/JSON `null` with no samples);
/// - `views` of a phase: distinct views with records in it; of the run: distinct views overall;
/// - **time to aligned** of a phase: for every item that has two or more views in the phase, the earliest group
///   (by its latest raw render time, which must be ≥ the phase's `commandClockNs`) that holds every one of that
///   item's views; the phase's value is the latest of those times over the items, minus `commandClockNs`, in ms.
///   `nil` when some such item never gets a complete group, or when no item has two views in the phase.
/// - **slowest first frame** of a phase: for each view, its first raw render in the phase at or after its command
///   (`viewCommandClockNs` of the view when the phase has it, else `commandClockNs`) minus that command; the
///   largest over the views, ms (`nil` when no view renders after its command).
///
/// Records whose phase index is not in `phases` still count in the whole-run figures, and get a phase summary
/// named "(unlisted)" without time to aligned. Phase summaries are in ascending index order.
public enum SyncAnalyzer {
    /// Frame index of a media time: round(mediaTimeNs · fps / 1e9).
    public static func frameIndex(mediaTimeNs: UInt64, fps: Double = 30) -> Int {
        Int((Double(mediaTimeNs) * fps / 1e9).rounded())
    }

    /// Quantization correction of a record, ns: (mediaTimeNs − frameIndex · 1e9 / fps) / rate. The aligned render
    /// time is renderClockNs minus this.
    public static func quantizationCorrectionNs(mediaTimeNs: UInt64, rate: Double, fps: Double = 30) -> Double {
        let index = frameIndex(mediaTimeNs: mediaTimeNs, fps: fps)
        let residual = Double(mediaTimeNs) - Double(index) * 1e9 / fps
        return residual / effectiveRate(rate)
    }

    /// Aligned render time of a record, ns (as a `Double`; see the type's documentation).
    public static func alignedRenderTimeNs(_ record: FrameRecord, fps: Double = 30) -> Double {
        Double(record.renderClockNs)
            - quantizationCorrectionNs(mediaTimeNs: record.mediaTimeNs, rate: record.rate, fps: fps)
    }

    static func effectiveRate(_ rate: Double) -> Double {
        rate.isFinite && rate != 0 ? rate : 1
    }

    /// Analyzes one run. `mode` is copied into the summary ("coordinated" or "baseline").
    public static func analyze(frames: [FrameRecord], phases: [PhaseRecord], fps: Double = 30,
                               mode: String) -> SyncAnalysisResult {
        let fps = fps.isFinite && fps > 0 ? fps : 30
        // Aligned times are computed relative to the earliest render, keeping full Double precision.
        let reference = frames.map(\.renderClockNs).min() ?? 0

        struct Entry { var view: Int; var rawNs: UInt64; var alignedNs: Double }
        struct GroupKey: Hashable { var item: String; var frameIndex: Int; var pass: Int }
        struct StreamKey: Hashable { var phase: Int; var item: String; var view: Int }

        // Split records by (phase, item, view), each in render order.
        var streams: [StreamKey: [FrameRecord]] = [:]
        for record in frames {
            streams[StreamKey(phase: record.phase, item: record.item, view: record.view), default: []].append(record)
        }

        let phaseByIndex = Dictionary(phases.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        // Per phase: groups keyed by (item, frame index, pass), each holding one entry per view.
        var groupsByPhase: [Int: [GroupKey: [Entry]]] = [:]
        var viewsByPhase: [Int: Set<Int>] = [:]
        // Per phase and view: from its command to its first render at or after it, ns.
        var firstRenderByPhase: [Int: [Int: UInt64]] = [:]
        for (key, records) in streams {
            if let phase = phaseByIndex[key.phase] {
                let command = phase.viewCommandClockNs?[String(key.view)] ?? phase.commandClockNs
                if let first = records.lazy.map(\.renderClockNs).filter({ $0 >= command }).min() {
                    let own = first - command
                    firstRenderByPhase[key.phase, default: [:]][key.view] =
                        min(firstRenderByPhase[key.phase]?[key.view] ?? .max, own)
                }
            }
            viewsByPhase[key.phase, default: []].insert(key.view)
            let ordered = records.enumerated().sorted { a, b in
                (a.element.renderClockNs, a.offset) < (b.element.renderClockNs, b.offset)
            }.map(\.element)
            var pass = 0
            var previous: Int?
            var seen = Set<GroupKey>()
            var groups = groupsByPhase[key.phase] ?? [:]
            for record in ordered {
                let index = frameIndex(mediaTimeNs: record.mediaTimeNs, fps: fps)
                if let previous {
                    let forward = effectiveRate(record.rate) > 0
                    if forward ? index < previous : index > previous { pass += 1 }
                }
                previous = index
                let groupKey = GroupKey(item: key.item, frameIndex: index, pass: pass)
                guard seen.insert(groupKey).inserted else { continue }   // first render of a frame in a pass
                let offset = Double(record.renderClockNs - reference)
                let aligned = offset - quantizationCorrectionNs(mediaTimeNs: record.mediaTimeNs,
                                                                rate: record.rate, fps: fps)
                groups[groupKey, default: []].append(Entry(view: key.view, rawNs: record.renderClockNs,
                                                           alignedNs: aligned))
            }
            groupsByPhase[key.phase] = groups
        }

        let allPhaseIndices = Set(phaseByIndex.keys).union(groupsByPhase.keys).sorted()

        var samples: [SkewSample] = []
        var summaries: [PhaseSummary] = []
        for phaseIndex in allPhaseIndices {
            let groups = groupsByPhase[phaseIndex] ?? [:]
            var phaseSkews: [UInt64] = []
            // Views of each item in this phase, and per item the earliest complete group's latest render.
            var viewsByItem: [String: Set<Int>] = [:]
            for (key, entries) in groups { viewsByItem[key.item, default: []].formUnion(entries.map(\.view)) }
            for (_, entries) in groups where entries.count >= 2 {
                let aligned = entries.map(\.alignedNs)
                let spread = (aligned.max()! - aligned.min()!).rounded()
                let skew = UInt64(max(0, spread))
                phaseSkews.append(skew)
                samples.append(SkewSample(clockNs: entries.map(\.rawNs).min()!, skewNs: skew, phase: phaseIndex))
            }
            let statistics = SkewStatistics(skewsNs: phaseSkews)

            var timeToAligned: Double?
            if let phase = phaseByIndex[phaseIndex] {
                let comparedItems = viewsByItem.filter { $0.value.count >= 2 }
                if !comparedItems.isEmpty {
                    var latest: UInt64? = 0
                    for (item, views) in comparedItems {
                        let earliest = groups
                            .filter { $0.key.item == item && $0.value.count == views.count }
                            .map { $0.value.map(\.rawNs).max()! }
                            .filter { $0 >= phase.commandClockNs }
                            .min()
                        if let earliest, let current = latest { latest = max(current, earliest) } else { latest = nil }
                    }
                    if let latest { timeToAligned = Double(latest - phase.commandClockNs) / 1e6 }
                }
            }

            summaries.append(PhaseSummary(
                index: phaseIndex, name: phaseByIndex[phaseIndex]?.name ?? "(unlisted)",
                views: viewsByPhase[phaseIndex]?.count ?? 0, frames: statistics.frames,
                p50SkewMs: statistics.p50Ms, p99SkewMs: statistics.p99Ms, maxSkewMs: statistics.maxMs,
                timeToAlignedMs: timeToAligned,
                slowestFirstFrameMs: firstRenderByPhase[phaseIndex]?.values.max().map { Double($0) / 1e6 }))
        }

        samples.sort { ($0.clockNs, $0.phase, $0.skewNs) < ($1.clockNs, $1.phase, $1.skewNs) }
        let overall = SkewStatistics(skewsNs: samples.map(\.skewNs))
        let summary = SyncSummary(
            mode: mode, views: Set(frames.map(\.view)).count, frames: overall.frames,
            p50SkewMs: overall.p50Ms, p99SkewMs: overall.p99Ms, maxSkewMs: overall.maxMs, phases: summaries)
        return SyncAnalysisResult(summary: summary, samples: samples, fps: fps)
    }
}
