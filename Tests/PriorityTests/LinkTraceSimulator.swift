import Priority

/// Synthetic download traces for `SharedLinkEstimator`: views fetching fragments over one link whose capacity is
/// shared equally among the transfers active at each moment (processor sharing, like TCP flows on a bottleneck),
/// each transfer starting `latency` after its request, delivered to the "demuxer" in chunks of `chunk` bytes
/// with a shorter last chunk — what hlsdemux2 hands its parsers. Pure: 1 ms steps, no clock.
struct LinkTraceSimulator {
    /// One view's player: fragment `k` (of `fragmentBytes`) is requested at `start + k × period`, or when the
    /// previous one finished if that is later (a player that keeps a buffer and idles between fragments: ON-OFF).
    /// `period` 0 = back to back (a view filling its buffer).
    struct ViewModel {
        var view: Int
        var fragmentBytes: Int
        var period: Double
        var start: Double = 0
        var stop: Double = .infinity
    }

    struct Arrival { var view: Int; var bytes: Int; var time: Double }

    /// Link capacity (bits/s) at time t (s).
    var rate: @Sendable (Double) -> Double
    var latency = 0.02
    var chunk = 32768
    var step = 0.001
    /// Chunks handed over together when the demuxer's thread falls behind: every chunk of a transfer is held
    /// back until `coalesce` of them arrived (1 = none), then delivered as one.
    var coalesce = 1

    func run(_ models: [ViewModel], until end: Double) -> [Arrival] {
        struct Transfer { var remaining: Double; var pending: Double; var beginsAt: Double; var held = 0 }
        var next = models.map { $0.start }               // next request time per view
        var fragmentIndex = models.map { _ in 0 }
        var active: [Int: Transfer] = [:]                // by model index
        var arrivals: [Arrival] = []
        var t = 0.0
        while t < end {
            for (i, model) in models.enumerated() where active[i] == nil && t >= next[i] && t < model.stop {
                active[i] = Transfer(remaining: Double(model.fragmentBytes), pending: 0, beginsAt: t + latency)
            }
            let flowing = active.filter { $0.value.beginsAt <= t }.map(\.key)
            if !flowing.isEmpty {
                let share = rate(t) * step / 8 / Double(flowing.count)
                for i in flowing {
                    var transfer = active[i]!
                    let got = min(share, transfer.remaining)
                    transfer.remaining -= got
                    transfer.pending += got
                    while transfer.pending >= Double(chunk) {
                        transfer.held += 1
                        transfer.pending -= Double(chunk)
                        if transfer.held >= coalesce {
                            arrivals.append(Arrival(view: models[i].view, bytes: chunk * transfer.held, time: t + step))
                            transfer.held = 0
                        }
                    }
                    if transfer.remaining <= 0.5 {
                        let last = chunk * transfer.held + (transfer.pending >= 1 ? Int(transfer.pending.rounded()) : 0)
                        if last > 0 { arrivals.append(Arrival(view: models[i].view, bytes: last, time: t + step)) }
                        active[i] = nil
                        fragmentIndex[i] += 1
                        let scheduled = models[i].start + Double(fragmentIndex[i]) * models[i].period
                        next[i] = max(t + step, scheduled)
                    } else {
                        active[i] = transfer
                    }
                }
            }
            t += step
        }
        return arrivals
    }
}

/// Feeds arrivals into an estimator, updating it every `every` seconds; returns (time, estimate) per update.
func replay(_ arrivals: [LinkTraceSimulator.Arrival], into estimator: inout SharedLinkEstimator, until end: Double,
            every: Double = 0.5) -> [(time: Double, estimate: SharedLinkEstimator.Estimate?)] {
    var result: [(Double, SharedLinkEstimator.Estimate?)] = []
    var index = 0
    var t = every
    while t <= end + 1e-9 {
        while index < arrivals.count && arrivals[index].time <= t {
            let a = arrivals[index]
            estimator.received(bytes: a.bytes, stream: a.view, at: .nanoseconds(Int64(a.time * 1e9)))
            index += 1
        }
        result.append((t, estimator.update(now: .nanoseconds(Int64(t * 1e9)))))
        t += every
    }
    return result
}
