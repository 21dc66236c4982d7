/// How much of a shared link a view may take: AVPlayer's `networkResourcePriority`.
public enum NetworkResourcePriority: String, Sendable, CaseIterable, CustomStringConvertible {
    case low
    case `default`
    case high

    /// The allocator's share weight (see `BandwidthAllocator`).
    public var weight: Int {
        switch self {
        case .low: return 1
        case .default: return 2
        case .high: return 4
        }
    }

    /// low → default → high → low (the window's number keys cycle through them).
    public var next: NetworkResourcePriority {
        switch self {
        case .low: return .default
        case .default: return .high
        case .high: return .low
        }
    }

    public var description: String { rawValue }
}

/// One variant (rung) of an HLS view: what it costs on the wire and how big it is.
public struct Rung: Sendable, Equatable, CustomStringConvertible {
    /// BANDWIDTH of the variant (bits/s): what hlsdemux2 compares with its `max-bitrate`.
    public var bandwidth: Int
    public var width: Int?
    public var height: Int?

    public init(bandwidth: Int, width: Int? = nil, height: Int? = nil) {
        self.bandwidth = bandwidth; self.width = width; self.height = height
    }

    /// "1920x1080 5.5M".
    public var description: String {
        let size = width.flatMap { w in height.map { "\(w)x\($0)" } } ?? "?x?"
        return "\(size) \(Rung.megabits(bandwidth))"
    }

    static func megabits(_ bps: Int) -> String {
        bps >= 1_000_000 ? String(format: "%.1fM", Double(bps) / 1e6) : "\(bps / 1000)k"
    }

    var pixels: Int { (width ?? 0) * (height ?? 0) }
}

/// What the allocator knows of one view.
public struct ViewDemand: Sendable, Equatable {
    public var id: Int
    public var priority: NetworkResourcePriority
    /// The view's rungs, any order (the allocator sorts them by bandwidth).
    public var rungs: [Rung]
    /// The size the view is shown at; nil when unknown or headless (no limit from the tile).
    public var tileWidth: Int?
    public var tileHeight: Int?

    public init(id: Int, priority: NetworkResourcePriority = .default, rungs: [Rung], tileWidth: Int? = nil,
                tileHeight: Int? = nil) {
        self.id = id; self.priority = priority; self.rungs = rungs; self.tileWidth = tileWidth; self.tileHeight = tileHeight
    }
}

/// The allocator's answer for one view.
public struct ViewAllocation: Sendable, Equatable {
    /// Index into the view's rungs sorted by bandwidth (0 = floor).
    public var rungIndex: Int
    public var rung: Rung
    /// The cap for hlsdemux2's `max-bitrate`: the chosen rung's BANDWIDTH (variants at or below it are allowed).
    public var maxBitrate: Int
}

public struct Allocation: Sendable, Equatable {
    public var views: [Int: ViewAllocation]
    /// Sum of the chosen rungs' bandwidths.
    public var total: Int
    /// The budget that was shared out (available × headroom), nil when unlimited.
    public var budget: Int?
    /// Even every view's floor does not fit the budget (the floors are kept anyway: a view cannot go lower).
    public var oversubscribed: Bool
}

/// Turns (available bandwidth, views, their priorities, tile sizes, decoding capacity) into one rung cap per view.
///
/// Pure: no I/O, no clocks; the same inputs give the same answer. Rules, in order (also in ARCHITECTURE.md):
/// 1. A view's useful rungs stop at the first rung that covers its tile (width and height ≥ the tile's): a view
///    shown small never needs a larger rung. No tile (headless) → every rung is useful.
/// 2. Budget = available × `headroom` (the rest absorbs audio, TCP and measurement noise). Every view starts on
///    its floor (lowest rung), which it keeps even when the floors alone exceed the budget.
/// 3. High views, in view order, then take the highest useful rung that still fits, before anyone else moves
///    above the floor.
/// 4. What is left goes one rung at a time to the default and low views: the next step goes to the view whose
///    current bandwidth divided by its priority weight (low 1, default 2, high 4) is smallest, among the upgrades
///    that fit; ties go to the higher priority, then the lower view number. So defaults get about twice what
///    lows get. Stops when no upgrade fits.
/// 5. Decoding capacity: the chosen rungs' pixels per frame, summed over views, stay within
///    `maxDecodedPixels` (when given) — a rung the machine could not decode alongside the others is no use.
/// Unlimited bandwidth (nil) skips rules 2–4: every view gets its top useful rung within rule 5.
public struct BandwidthAllocator: Sendable {
    public var headroom: Double
    /// Sum of width × height over all views' chosen rungs; nil = no limit.
    public var maxDecodedPixels: Int?

    public init(headroom: Double = 0.9, maxDecodedPixels: Int? = nil) {
        self.headroom = headroom; self.maxDecodedPixels = maxDecodedPixels
    }

    /// A decoding budget for `cores` CPU cores: one 1080p30 H.264 decode per core.
    public static func decodedPixels(cores: Int) -> Int { max(1, cores) * 1920 * 1080 }

    public func allocate(available: Int?, views: [ViewDemand]) -> Allocation {
        struct Work {
            var demand: ViewDemand
            var rungs: [Rung]      // sorted, cut to the useful ones
            var index = 0
            var current: Rung { rungs[index] }
        }
        var work = views.filter { !$0.rungs.isEmpty }.sorted { $0.id < $1.id }.map { demand -> Work in
            let sorted = demand.rungs.sorted { $0.bandwidth < $1.bandwidth }
            return Work(demand: demand, rungs: Self.usefulRungs(sorted, tileWidth: demand.tileWidth, tileHeight: demand.tileHeight))
        }
        var pixels = work.reduce(0) { $0 + $1.current.pixels }
        func pixelsFit(_ w: Work, to rung: Rung) -> Bool {
            guard let limit = maxDecodedPixels else { return true }
            return pixels - w.current.pixels + rung.pixels <= limit
        }
        var spent = work.reduce(0) { $0 + $1.current.bandwidth }
        let budget = available.map { Int(Double($0) * headroom) }

        if let budget {
            // Rule 3: high views first, straight to the best rung that fits.
            for i in work.indices where work[i].demand.priority == .high {
                for candidate in stride(from: work[i].rungs.count - 1, to: work[i].index, by: -1) {
                    let rung = work[i].rungs[candidate]
                    if spent - work[i].current.bandwidth + rung.bandwidth <= budget && pixelsFit(work[i], to: rung) {
                        spent += rung.bandwidth - work[i].current.bandwidth
                        pixels += rung.pixels - work[i].current.pixels
                        work[i].index = candidate
                        break
                    }
                }
            }
            // Rule 4: weighted steps for everyone else.
            while true {
                var best: Int?
                for i in work.indices where work[i].demand.priority != .high && work[i].index + 1 < work[i].rungs.count {
                    let next = work[i].rungs[work[i].index + 1]
                    guard spent - work[i].current.bandwidth + next.bandwidth <= budget, pixelsFit(work[i], to: next) else { continue }
                    if let b = best {
                        let mine = Double(work[i].current.bandwidth) / Double(work[i].demand.priority.weight)
                        let theirs = Double(work[b].current.bandwidth) / Double(work[b].demand.priority.weight)
                        if mine < theirs || (mine == theirs && work[i].demand.priority.weight > work[b].demand.priority.weight) {
                            best = i
                        }
                    } else {
                        best = i
                    }
                }
                guard let i = best else { break }
                let next = work[i].rungs[work[i].index + 1]
                spent += next.bandwidth - work[i].current.bandwidth
                pixels += next.pixels - work[i].current.pixels
                work[i].index += 1
            }
        } else {
            // Unlimited: top useful rung, highest priority first while decoding capacity lasts.
            let order = work.indices.sorted { (work[$0].demand.priority.weight, -work[$0].demand.id) > (work[$1].demand.priority.weight, -work[$1].demand.id) }
            for i in order {
                for candidate in stride(from: work[i].rungs.count - 1, to: work[i].index, by: -1)
                where pixelsFit(work[i], to: work[i].rungs[candidate]) {
                    spent += work[i].rungs[candidate].bandwidth - work[i].current.bandwidth
                    pixels += work[i].rungs[candidate].pixels - work[i].current.pixels
                    work[i].index = candidate
                    break
                }
            }
        }
        var result: [Int: ViewAllocation] = [:]
        for w in work {
            result[w.demand.id] = ViewAllocation(rungIndex: w.index, rung: w.current, maxBitrate: w.current.bandwidth)
        }
        let floors = work.reduce(0) { $0 + $1.rungs[0].bandwidth }
        return Allocation(views: result, total: spent, budget: budget, oversubscribed: budget.map { floors > $0 } ?? false)
    }

    /// Rungs up to and including the first that covers the tile (rule 1).
    static func usefulRungs(_ sorted: [Rung], tileWidth: Int?, tileHeight: Int?) -> [Rung] {
        guard tileWidth != nil || tileHeight != nil else { return sorted }
        var useful: [Rung] = []
        for rung in sorted {
            useful.append(rung)
            let coversWidth = tileWidth.map { tw in rung.width.map { $0 >= tw } ?? false } ?? true
            let coversHeight = tileHeight.map { th in rung.height.map { $0 >= th } ?? false } ?? true
            if coversWidth && coversHeight { break }
        }
        return useful
    }
}
