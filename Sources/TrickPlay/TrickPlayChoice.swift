/// Which I-frame trick play shows at a reading of its clock, and when the choice changes next. Pure
/// (`TrickPlayChoiceTests`).
///
/// Forward, the I-frame shown is the last one the clock passed: the last at or before it. Backward, it is likewise
/// the last one the clock passed going down: the first at or after it (never one after the start). Taking the one
/// at or before the clock backward showed, just after the clock crossed 20 s, the I-frame of 18 s — one behind
/// (`iframe 18.0 s (clock 20.0 s)`).
enum TrickPlayChoice {
    /// Index into `times` (ascending media times of the I-frames) of the one to show at `clock`.
    static func index(times: [Double], clock: Double, rate: Double, start: Double) -> Int {
        guard !times.isEmpty else { return 0 }
        let atOrBefore = { (t: Double) -> Int in times.lastIndex { $0 <= t + 1e-9 } ?? 0 }
        guard rate < 0 else { return atOrBefore(clock) }
        let atOrAfter = times.firstIndex { $0 >= clock - 1e-9 } ?? times.count - 1
        return min(atOrAfter, atOrBefore(start))
    }

    /// The clock reading at which the I-frame after `shown` (in the direction of `rate`) is due; `duration` or 0
    /// at the ends.
    static func boundary(times: [Double], shown: Int, rate: Double, duration: Double) -> Double {
        if rate > 0 { return shown + 1 < times.count ? times[shown + 1] : duration }
        return shown > 0 && shown - 1 < times.count ? times[shown - 1] : 0
    }
}
