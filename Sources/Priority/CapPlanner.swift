/// What one view's hlsdemux2 is told, before the manager adds its buffer length.
public struct PlannedCap: Sendable, Equatable {
    /// The rung the view is held to (its cap), the one the report shows as allocated.
    public var rung: Rung
    /// `max-bitrate`: variants above it are never chosen.
    public var maxBitrate: Int
    /// `connection-bitrate`: non-zero pins the view to the best variant at or below it, whatever the demuxer
    /// measures; 0 leaves the demuxer's own measurement (× 0.8) in charge below the cap.
    public var connectionBitrate: Int

    public init(rung: Rung, maxBitrate: Int, connectionBitrate: Int) {
        self.rung = rung; self.maxBitrate = maxBitrate; self.connectionBitrate = connectionBitrate
    }
}

/// Turns an allocation into demuxer caps, by how sure the link figure is, and lets low views drop first.
///
/// - Given budget (`--bandwidth`): every view pinned to its allocated rung (from the first fragment on).
/// - Estimated and confident: high views pinned to their rung (their own measurement on a shared link says
///   little: a view downloading alongside three others sees a quarter), the others capped and free below it.
/// - Still measuring: high views capped at their top useful rung and free to climb by their own measurement,
///   the others held on their floor — until the link is known only high views may leave it.
/// - A shrinking link (estimated): when a new allocation lowers a high view, the others go to their floor at
///   once and the high view keeps its rung (its buffer carries it) until every other view shows a rung at or
///   below its new cap, or the grace passed; if the allocation still lowers it then, it drops too. So under a
///   shrinking link the low-priority views drop first — on screen, not only in their caps: a demuxer shows a new
///   cap only after the fragments it already holds (seconds), so a fixed delay alone let both drop together.
///   The grace is `highDropGrace` while the link can still carry the held high rungs themselves (the others on
///   their floors only slow them down), and only `unfitGrace` of the link not carrying them, counted from when it
///   stopped (5.5 Mbit/s held 6 s on a 5 Mbit/s link stalled the high view; 2.85 Mbit/s held on 3.5 Mbit/s did
///   not; the estimate dips for a poll or two across a shrink, which must not end the hold).
///
/// Pure: time is passed in. Owned by the manager's actor.
public struct CapPlanner: Sendable {
    public var highDropGrace: Duration
    public var unfitGrace: Duration
    /// The rung each view was last held to.
    public private(set) var enforced: [Int: Rung] = [:]
    /// When a high view's drop was first wanted (nil: none pending).
    public private(set) var dropWantedSince: Duration?
    /// Since when, during a hold, the held high rungs have not fitted the link (nil: they fit). Counted from when
    /// they stopped fitting, not from the hold's start: one low estimate 2.5 s into a hold that fitted ended it at
    /// once, before the low views showed their floor (EstimatedLinkTests: the high view dropped first).
    public private(set) var unfitSince: Duration?

    public init(highDropGrace: Duration = .seconds(6), unfitGrace: Duration = .seconds(2)) {
        self.highDropGrace = highDropGrace; self.unfitGrace = unfitGrace
    }

    /// Caps for every view of `allocation`; `priorities` by view id. `floors` = each view's lowest rung; `shown`
    /// = the rung each view shows now (missing: unknown).
    public mutating func plan(link: LinkFigure, allocation: Allocation, priorities: [Int: NetworkResourcePriority],
                              floors: [Int: Rung], shown: [Int: Rung] = [:], now: Duration) -> [Int: PlannedCap] {
        var caps: [Int: PlannedCap] = [:]
        switch link {
        case .given:
            dropWantedSince = nil; unfitSince = nil
            for (id, chosen) in allocation.views {
                caps[id] = PlannedCap(rung: chosen.rung, maxBitrate: chosen.maxBitrate, connectionBitrate: chosen.maxBitrate)
            }
        case .measuring:
            dropWantedSince = nil; unfitSince = nil
            for (id, chosen) in allocation.views {
                let rung = priorities[id] == .high ? chosen.rung : (floors[id] ?? chosen.rung)
                caps[id] = PlannedCap(rung: rung, maxBitrate: rung.bandwidth, connectionBitrate: 0)
            }
        case .estimated(let bps):
            let dropping = allocation.views.filter { id, chosen in
                priorities[id] == .high && (enforced[id].map { chosen.rung.bandwidth < $0.bandwidth } ?? false)
            }
            var hold = false
            let held = dropping.keys.reduce(0) { $0 + (enforced[$1]?.bandwidth ?? 0) }
            if dropping.isEmpty {
                dropWantedSince = nil
            } else if let since = dropWantedSince {
                let othersDown = allocation.views.keys.allSatisfy { id in
                    priorities[id] == .high || (shown[id].map { $0.bandwidth <= (enforced[id] ?? $0).bandwidth } ?? true)
                }
                if held <= bps { unfitSince = nil } else if unfitSince == nil { unfitSince = now }
                let unfitTooLong = unfitSince.map { now - $0 >= unfitGrace } ?? false
                hold = now - since < highDropGrace && !unfitTooLong && !othersDown
            } else {
                dropWantedSince = now
                unfitSince = held <= bps ? nil : now
                hold = true
            }
            for (id, chosen) in allocation.views {
                let high = priorities[id] == .high
                var rung = chosen.rung
                if hold {
                    if high, let kept = enforced[id], kept.bandwidth > rung.bandwidth { rung = kept }
                    if !high { rung = floors[id] ?? rung }
                }
                caps[id] = PlannedCap(rung: rung, maxBitrate: rung.bandwidth, connectionBitrate: high ? rung.bandwidth : 0)
            }
            if !hold { dropWantedSince = nil; unfitSince = nil }
        }
        enforced = caps.mapValues(\.rung)
        return caps
    }

    /// A view left: forget what it was held to.
    public mutating func forget(view id: Int) { enforced[id] = nil }
}
