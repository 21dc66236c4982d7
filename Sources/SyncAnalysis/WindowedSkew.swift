/// Skew between coordinated views over a long run that nobody scripted phase by phase (`play --sync-log`, the
/// soak): frames are compared only inside *quiet windows* — spans in which no command or fault could have moved
/// a view on purpose — and the skew samples are summarised per block of the run (5 min in the soak), so a drift
/// shows as a rising block rather than vanishing in one figure.
///
/// Definitions:
/// - windows do not overlap; a frame belongs to the window with `startNs ≤ renderClockNs < endNs`; a frame in none,
///   or of a view in its window's `excludedViews` (a view suspended on purpose, as by `r N`), is not compared;
/// - inside each window the frames are compared exactly as `sync-report` compares them within one phase
///   (`SyncAnalyzer`: same frame index, same pass, same item, aligned render times; one skew sample per frame
///   group of two or more views) — each window is one phase, so frames of different windows never meet;
/// - block k holds the samples with `originNs + k·blockNs ≤ clockNs < originNs + (k+1)·blockNs`; blocks run from
///   k = 0 to the one holding `untilNs` (or the last sample), empty ones included (`frames` 0, figures nil);
///   samples before `originNs` count in `overall` only.
public enum WindowedSkew {
    public struct Window: Sendable, Equatable {
        public var startNs: UInt64
        public var endNs: UInt64
        public var excludedViews: Set<Int>
        public init(startNs: UInt64, endNs: UInt64, excludedViews: Set<Int> = []) {
            self.startNs = startNs; self.endNs = endNs; self.excludedViews = excludedViews
        }
    }

    public struct Block: Sendable, Equatable {
        public var index: Int
        public var startNs: UInt64
        public var statistics: SkewStatistics
        /// Distinct views with a compared frame in the block.
        public var views: Int
    }

    public struct Result: Sendable, Equatable {
        public var blocks: [Block]
        public var overall: SkewStatistics
        /// Every sample, ascending by `clockNs` (`phase` = the window's index in start order).
        public var samples: [SkewSample]
        /// Frames inside a window and not excluded (the ones compared, or left without a partner).
        public var framesInWindows: Int
    }

    public static func analyze(frames: [FrameRecord], windows: [Window], originNs: UInt64, blockNs: UInt64,
                               untilNs: UInt64? = nil, fps: Double = 30) -> Result {
        let ordered = windows.filter { $0.endNs > $0.startNs }.sorted { ($0.startNs, $0.endNs) < ($1.startNs, $1.endNs) }
        var kept: [FrameRecord] = []
        kept.reserveCapacity(frames.count)
        for var frame in frames {
            guard let index = windowIndex(of: frame.renderClockNs, in: ordered),
                  !ordered[index].excludedViews.contains(frame.view) else { continue }
            frame.phase = index
            kept.append(frame)
        }
        let analysis = SyncAnalyzer.analyze(frames: kept, phases: [], fps: fps, mode: "windowed")
        let samples = analysis.samples
        let blockNs = max(blockNs, 1)
        func block(of clock: UInt64) -> Int? { clock >= originNs ? Int((clock - originNs) / blockNs) : nil }

        // The views of a sample: those with a compared frame at its (window, frame group); counted per block from
        // the kept frames whose window has samples from two views or more (cheap and close enough for a table).
        var viewsByBlock: [Int: Set<Int>] = [:]
        var comparedWindows = Set<Int>()
        for sample in samples { comparedWindows.insert(sample.phase) }
        for frame in kept where comparedWindows.contains(frame.phase) {
            if let k = block(of: frame.renderClockNs) { viewsByBlock[k, default: []].insert(frame.view) }
        }
        var skewsByBlock: [Int: [UInt64]] = [:]
        for sample in samples {
            if let k = block(of: sample.clockNs) { skewsByBlock[k, default: []].append(sample.skewNs) }
        }
        let last = max(untilNs.flatMap(block(of:)) ?? -1, skewsByBlock.keys.max() ?? -1)
        let blocks: [Block] = last < 0 ? [] : (0...last).map { k in
            Block(index: k, startNs: originNs + UInt64(k) * blockNs,
                  statistics: SkewStatistics(skewsNs: skewsByBlock[k] ?? []), views: viewsByBlock[k]?.count ?? 0)
        }
        return Result(blocks: blocks, overall: SkewStatistics(skewsNs: samples.map(\.skewNs)), samples: samples,
                      framesInWindows: kept.count)
    }

    /// Index of the window (sorted by start, not overlapping) holding `time`: the last one starting at or before
    /// it, when it has not ended yet.
    static func windowIndex(of time: UInt64, in windows: [Window]) -> Int? {
        var low = 0, high = windows.count
        while low < high {
            let mid = (low + high) / 2
            if windows[mid].startNs <= time { low = mid + 1 } else { high = mid }
        }
        guard low > 0, windows[low - 1].endNs > time else { return nil }
        return low - 1
    }
}
