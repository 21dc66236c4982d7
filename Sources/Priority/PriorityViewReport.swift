import Multiview

/// What the views share a link by: the user's figure or the estimator's.
public enum LinkFigure: Sendable, Equatable {
    /// `--bandwidth` (bits/s).
    case given(Int)
    /// The shared-link estimate (bits/s), confident enough to allocate by.
    case estimated(Int)
    /// Not known yet (the estimator has too little busy time); the figure so far, if any.
    case measuring(Int?)

    /// "link 6.3M (given)", "link ~6.8M (est)", "link ? (measuring)".
    public var label: String {
        switch self {
        case .given(let bps): return "link \(Rung.megabits(bps)) (given)"
        case .estimated(let bps): return "link ~\(Rung.megabits(bps)) (est)"
        case .measuring(let bps): return "link \(bps.map { "~" + Rung.megabits($0) } ?? "?") (measuring)"
        }
    }

    /// The figure to allocate by, nil while measuring.
    public var bitsPerSecond: Int? {
        switch self {
        case .given(let bps), .estimated(let bps): return bps
        case .measuring: return nil
        }
    }
}

/// One view as the manager reports it.
public struct PriorityViewReport: Sendable, Equatable {
    public var view: ViewIdentity
    public var priority: NetworkResourcePriority
    /// The variant being shown (from the decoded video's size), nil before the first frame or for non-HLS views.
    public var currentRung: Rung?
    /// Index of `currentRung` among the view's rungs (0 = lowest), and how many there are.
    public var currentRungIndex: Int?
    public var rungCount: Int
    /// The rung the allocator chose (the demuxer's cap).
    public var allocated: Rung?
    /// hlsdemux2's `current-bandwidth` (bits/s), 0 when unknown.
    public var measuredBandwidth: Int
    /// The link figure, shown on the first HLS view's label only (the status line holds every view's label).
    public var link: LinkFigure?

    /// "high 1920x1080 5.5M" (the tile tag and the status line), "… · link ~6.8M (est)" on the first HLS view.
    public var label: String {
        var text = priority.rawValue
        if let currentRung { text += " \(currentRung)" } else if rungCount > 0 { text += " …" }
        if let allocated, allocated != currentRung { text += " (cap \(Rung.megabits(allocated.bandwidth)))" }
        if let link { text += " · \(link.label)" }
        return text
    }
}
