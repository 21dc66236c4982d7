import GStreamer
import Synchronization

/// Keeps one coordinated view's audio on the shared clock to within about half a millisecond, so two views'
/// sounds are heard together and not only their frames seen together.
///
/// Why not pulsesink's own `slave-method=skew`: it corrects only when a moving average of the skew passes half
/// its `drift-tolerance` (default 40 ms, so two views were heard 20–30 ms apart with their video aligned to
/// 0.3 ms), and with a tolerance small enough for 2 ms its average hunts back and forth across the threshold,
/// each hunt an audible jump. PulseAudio's start-up calibration is off by up to tens of ms.
///
/// The rule here: the sink reports its skew (device time − clock time) for every buffer it renders. After a short
/// warm-up, while settling (after each start, seek or resync) the follower takes the median of short windows and removes any
/// skew above 0.25 ms at once; once settled it uses long windows (about a second) and acts above 0.4 ms (real
/// devices drift a few ppm; the median of a long window hardly moves with PulseAudio's jitter, so it does not hunt). A median over a window ignores the occasional jumps in PulseAudio's timing reports, and a correction
/// empties the window so no skew is corrected twice.
///
/// Threading: `observe` runs on the sink's streaming thread; `statistics` may be read from anywhere. All state is
/// in one `Mutex`.
public final class AudioClockFollower: Sendable {
    public struct Settings: Sendable {
        /// Observations ignored after a discontinuity: the sink takes in its first buffers at once to fill its
        /// device buffer, before the device clock runs, and their skews say nothing about the playout.
        public var warmUpObservations = 10
        /// Observations per decision while settling (one per rendered buffer, 10–20 ms each).
        public var settlingWindow = 8
        public var settlingThresholdNs: Int64 = 250_000
        /// How many observations after a discontinuity count as settling (~3 s of audio).
        public var settlingObservations = 160
        public var steadyWindow = 48
        public var steadyThresholdNs: Int64 = 400_000
        /// Skews beyond this are not a playout error to correct but a calibration in progress (the sink reports
        /// times against a zero calibration until its first sync); they are ignored.
        public var plausibleSkewNs: Int64 = 1_000_000_000
        public init() {}
    }

    public struct Statistics: Sendable, Equatable {
        /// Playout-pointer moves requested, and the last one (ns).
        public var corrections = 0
        public var lastCorrectionNs: Int64 = 0
        /// The median skew of the last full window (ns), nil before the first one.
        public var lastMedianSkewNs: Int64?
        public var discontinuities = 0
        /// Skews ignored as implausible (see `Settings.plausibleSkewNs`).
        public var implausibleSkews = 0
    }

    private struct State {
        var window: [Int64] = []
        var observationsSinceDiscontinuity = 0
        var statistics = Statistics()
    }

    private let settings: Settings
    private let state = Mutex(State())

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Takes one report from the sink; returns the playout correction to apply (ns, 0 = none).
    public func observe(_ observation: AudioSlavingObservation) -> Int64 {
        state.withLock { state in
            switch observation {
            case .discontinuity:
                state.window.removeAll(keepingCapacity: true)
                state.observationsSinceDiscontinuity = 0
                state.statistics.discontinuities += 1
                return 0
            case .skew(let skew):
                guard abs(skew) <= settings.plausibleSkewNs else {
                    state.statistics.implausibleSkews += 1
                    return 0
                }
                state.observationsSinceDiscontinuity += 1
                guard state.observationsSinceDiscontinuity > settings.warmUpObservations else { return 0 }
                // Settled: the long windows start empty.
                if state.observationsSinceDiscontinuity == settings.settlingObservations + 1 { state.window.removeAll() }
                state.window.append(skew)
                let settling = state.observationsSinceDiscontinuity <= settings.settlingObservations
                guard state.window.count >= (settling ? settings.settlingWindow : settings.steadyWindow) else { return 0 }
                let median = state.window.sorted()[state.window.count / 2]
                state.window.removeAll(keepingCapacity: true)
                state.statistics.lastMedianSkewNs = median
                guard abs(median) > (settling ? settings.settlingThresholdNs : settings.steadyThresholdNs) else { return 0 }
                state.statistics.corrections += 1
                state.statistics.lastCorrectionNs = median
                return median
            }
        }
    }
}
