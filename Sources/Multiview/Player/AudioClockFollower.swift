import GStreamer
import Synchronization

/// Keeps one view's audio on its pipeline's clock (the system clock, or a group's shared clock), so the video never
/// waits for PulseAudio and two coordinated views' sounds are heard together and not only
/// their frames seen together (measured: two views' clicks 0–0.6 ms apart on an idle machine, up to ~3 ms with
/// two CPU-bound loops running, see Scripts/bench-audio).
///
/// Why not pulsesink's own `slave-method=skew`: it corrects only when a moving average of the skew passes half
/// its `drift-tolerance` (default 40 ms, so two views were heard 20–30 ms apart with their video aligned to
/// 0.3 ms), and with a tolerance small enough for 2 ms its average hunts back and forth across the threshold,
/// each hunt an audible jump. PulseAudio's start-up calibration is off by up to tens of ms.
///
/// The rule here: the sink reports its skew (device time − clock time) for every buffer it renders. After a short
/// warm-up following each start, seek or resync, the median of one short window is removed at once, whatever its
/// size: that is the start's own misplacement (PulseAudio's calibration is off by up to tens of ms). From then on
/// the follower trusts PulseAudio's clock only as far as physics goes. In a stream's first seconds its
/// interpolated time runs off the real clock by up to ~3 ms per second, in opposite directions for two streams
/// (measured: a follower that corrected every 0.25 ms put two views 7–9 ms apart within 3.5 s, while a null sink
/// cannot drift at all and real devices drift ~0.01–0.1 ms per second). So the follower corrects the median of
/// long windows (about a second) above 0.4 ms by at most 0.15 ms per window — enough to follow any real device,
/// too little to follow PulseAudio's settling — except for medians above 20 ms, which are real misplacements
/// (a start calibrated against a stream time that then jumped) and are removed whole, as soon as the median of
/// the last few reports (a start window's worth) shows one: PulseAudio settles ~3 ms per second, never 20 ms in
/// those few reports, while a misplacement left for a long window is heard late for a second. A median over a window
/// ignores the occasional jumps in PulseAudio's timing reports, and a correction empties the window so no skew is
/// corrected twice. In steady play a report more than `stall` (250 ms) away from where the last decision left the
/// skew is removed on that very report, before its buffer is placed that far from the device.
///
/// Why the last rule, and why `plausibleSkew` is seconds: PulseAudio (a null sink, a busy two-core machine, three
/// new streams) did not start consuming a new stream for 0.2–1.9 s after it was uncorked: the sink stayed blocked
/// in its write that long (seen with either clock model; the idle null sink's ~2 s latency draining). A sink
/// following the system clock then reports its playout that far behind: 1.46 s was ignored as implausible
/// (`plausibleSkew` was 1 s) and that view's samples stayed queued 1.46 s ahead of the device, silent at first
/// and 1.46 s late for good (RoutingArbiterTests' mixable route with every view on the system clock).
///
/// Threading: `observe` runs on the sink's streaming thread; `statistics` may be read from anywhere. All state is
/// in one `Mutex`.
public final class AudioClockFollower: Sendable {
    public struct Settings: Sendable {
        /// Observations ignored after a discontinuity: the sink takes in its first buffers at once to fill its
        /// device buffer, before the device clock runs, and their skews say nothing about the playout.
        public var warmUpObservations = 10
        /// The one window after the warm-up (one observation per rendered buffer, 10–20 ms each) whose median
        /// is removed whole when above `startThreshold`.
        public var startWindow = 8
        public var startThreshold: Duration = .microseconds(250)
        /// Afterwards: windows of this many observations (about a second of audio)...
        public var steadyWindow = 48
        /// ...whose median, when above this, is corrected...
        public var steadyThreshold: Duration = .microseconds(400)
        /// ...by at most this much per window (a real device drifts less per second)...
        public var maxSteadyStep: Duration = .microseconds(150)
        /// ...unless it is above this: a misplacement, removed whole. After the start decision a misplacement is
        /// also looked for in the median of the last `startWindow` reports (moved this far from where the last
        /// decision left the skew): removed then, not a long window (~1 s) later.
        public var misplacement: Duration = .milliseconds(20)
        /// After the start decision, a report this far from where the last decision left the skew is a stall of
        /// the server (or a stream moved): removed on that report. PulseAudio's own start-up errors and
        /// timing noise stay well under it (measured: up to ~106 ms for a fresh stream's first start).
        public var stall: Duration = .milliseconds(250)
        /// Skews beyond this are not a playout error to correct but a broken timeline: against a zero calibration
        /// the sink reports the whole clock time (hours of uptime), and libpulse's wrapped stream time is centuries
        /// ahead (see `AudioClockGuard`). They are ignored. Server stalls of up to ~2 s are real and corrected.
        public var plausibleSkew: Duration = .seconds(10)
        public init() {}

        /// For a view on a group's clock, whose audio is silent until the start decision (`AudioPlacementHold`), when
        /// its reports are libpulse's smoothed time (no `PulseTimingTap`): a warm-up twice as long, so the start
        /// window is taken 0.4-0.6 s into the stream instead of 0.2-0.4 s. libpulse's smoother, anchored anew at each
        /// start, does not yet show in a stream's first few hundred ms where it really plays (one member's start
        /// window said -0.07 ms, its next long window +16.3 ms, and it was heard 16.6 ms off), and what the start
        /// window misses is left to 0.15 ms steps. Measured across processes (`Scripts/bench-network`, largest click
        /// spread per run, interleaved): 2 members 0.35-0.60 ms in 3 runs against 0.98-2.98 ms in 4 with the warm-up
        /// of 10. With the server's own timing the longer warm-up gains nothing (4 members 0.31 and 0.92 ms with 10,
        /// 0.77 and 0.71 with 20; 8 members 0.71 and 1.04 against 0.98 and 0.94) and costs 0.2 s more silence after
        /// each start and seek, so a tapped view keeps the default.
        public static var onGroupClock: Settings {
            var settings = Settings()
            settings.warmUpObservations = 20
            return settings
        }
    }

    public struct Statistics: Sendable, Equatable {
        /// Playout-pointer moves requested, and the last one.
        public var corrections = 0
        public var lastCorrection: Duration = .zero
        /// The median skew of the last full window, nil before the first one.
        public var lastMedianSkew: Duration?
        /// The discontinuities by the sink's reason, their number, and the last one's reason.
        public var discontinuityReasons: [AudioDiscontinuityReason: Int] = [:]
        public var discontinuities: Int { discontinuityReasons.values.reduce(0, +) }
        public var lastDiscontinuity: AudioDiscontinuityReason?
        /// Skews ignored as implausible (see `Settings.plausibleSkew`).
        public var implausibleSkews = 0
        /// Stalls removed at once (see `Settings.stall`).
        public var stalls = 0
        /// Misplacements found in the last few reports after the start decision (see `Settings.misplacement`).
        public var misplacements = 0
    }

    private struct State {
        var window: [Int64] = []
        var observationsSinceDiscontinuity = 0
        /// The start window's decision is made (until the next discontinuity or stall).
        var started = false
        /// The skew the last decision left (its median minus its correction); nil before the first decision.
        var reference: Int64?
        /// The last `startWindow` skews after the start decision (the short look for a misplacement).
        var recent: [Int64] = []
        var statistics = Statistics()

        /// Warm-up and a start window again (after a discontinuity, a stall or a misplacement): the start
        /// window removes exactly what is left.
        mutating func restart() {
            window.removeAll(keepingCapacity: true)
            recent.removeAll(keepingCapacity: true)
            observationsSinceDiscontinuity = 0
            started = false
            reference = nil
        }
    }

    private let settings: Settings
    /// `settings` in nanoseconds, the unit of the sink's slaving callback (per buffer, on its streaming thread).
    private let limitsNs: (start: Int64, steady: Int64, step: Int64, misplacement: Int64, stall: Int64, plausible: Int64)
    private let state = Mutex(State())

    public init(settings: Settings = Settings()) {
        self.settings = settings
        func ns(_ d: Duration) -> Int64 { d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000 }
        limitsNs = (ns(settings.startThreshold), ns(settings.steadyThreshold), ns(settings.maxSteadyStep),
                    ns(settings.misplacement), ns(settings.stall), ns(settings.plausibleSkew))
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Whether the stream is placed on the clock: the start decision is made since the last discontinuity, stall or
    /// misplacement. Until then the stream plays wherever PulseAudio started it (see `AudioPlacementHold`).
    public var isPlaced: Bool { state.withLock { $0.started } }

    /// Takes one report from the sink; returns the playout correction to apply (ns, 0 = none).
    public func observe(_ observation: AudioSlavingObservation) -> Int64 {
        state.withLock { state in
            switch observation {
            case .discontinuity(let reason):
                state.restart()
                state.statistics.discontinuityReasons[reason, default: 0] += 1
                state.statistics.lastDiscontinuity = reason
                return 0
            case .skew(let skew):
                guard abs(skew) <= limitsNs.plausible else {
                    state.statistics.implausibleSkews += 1
                    return 0
                }
                if let reference = state.reference, abs(skew - reference) > limitsNs.stall {
                    // A stall in steady play: removed on its first report, before this buffer is placed that far
                    // from the device (placed 1.46 s ahead, the sink waits that long in its write and the view is
                    // silent). Then warm-up and a start window again, to remove what is left exactly. Not before
                    // the start decision: single reports around a start can be far off, and the start window's
                    // median removes a stall there anyway.
                    state.restart()
                    state.statistics.stalls += 1
                    state.statistics.corrections += 1
                    state.statistics.lastCorrection = .nanoseconds(skew)
                    return skew
                }
                state.observationsSinceDiscontinuity += 1
                guard state.observationsSinceDiscontinuity > settings.warmUpObservations else { return 0 }
                if let reference = state.reference {
                    // A misplacement after the start decision (issue 15 row 13: PulseAudio began playing one view
                    // 217 ms late after its start decision; corrected only at the end of its first long window,
                    // the view's first click was heard 217 ms late and the correction cut its third). The median
                    // of the last few reports, like the start window's, ignores single far reports.
                    state.recent.append(skew)
                    if state.recent.count > settings.startWindow { state.recent.removeFirst() }
                    let median = state.recent.sorted()[state.recent.count / 2]
                    if state.recent.count == settings.startWindow, abs(median - reference) > limitsNs.misplacement {
                        state.restart()
                        state.statistics.misplacements += 1
                        state.statistics.corrections += 1
                        state.statistics.lastCorrection = .nanoseconds(median)
                        return median
                    }
                }
                state.window.append(skew)
                guard state.window.count >= (state.started ? settings.steadyWindow : settings.startWindow) else { return 0 }
                let median = state.window.sorted()[state.window.count / 2]
                state.window.removeAll(keepingCapacity: true)
                state.statistics.lastMedianSkew = .nanoseconds(median)
                let correction: Int64
                if !state.started {
                    state.started = true
                    correction = abs(median) > limitsNs.start ? median : 0
                } else if abs(median) > limitsNs.misplacement {
                    correction = median
                } else if abs(median) > limitsNs.steady {
                    correction = min(max(median, -limitsNs.step), limitsNs.step)
                } else {
                    correction = 0
                }
                state.reference = median - correction
                guard correction != 0 else { return 0 }
                state.recent.removeAll(keepingCapacity: true)   // those reports are from before this correction
                state.statistics.corrections += 1
                state.statistics.lastCorrection = .nanoseconds(correction)
                return correction
            }
        }
    }
}
