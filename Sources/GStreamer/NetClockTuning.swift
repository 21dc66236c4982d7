/// The settings a `NetClientClock` runs with: GstNetClientClock's `round-trip-limit` and
/// `minimum-update-interval`, and its internal clock's poll period (`timeout`) and regression window
/// (`window-size`). Pure value; `NetClientClock` applies it.
public struct NetClockTuning: Sendable, Equatable {
    /// Exchanges whose round trip is longer are discarded (GStreamer then waits 250 ms before the next poll).
    public var roundTripLimit: Duration
    /// The shortest time between two polls when the round trip is shorter than this (loopback, LAN).
    public var minimumUpdateInterval: Duration
    /// How long after an accepted answer (or a send) the next request goes out.
    public var pollInterval: Duration
    /// Accepted exchanges the calibration's linear regression spans (GStreamer allows 2…1024).
    public var calibrationWindow: Int
    /// Whether the round-trip limit follows the link (`RoundTripLimitPolicy`, `roundTripLimit` its ceiling).
    public var adaptsRoundTripLimit: Bool

    public init(roundTripLimit: Duration, minimumUpdateInterval: Duration, pollInterval: Duration,
                calibrationWindow: Int, adaptsRoundTripLimit: Bool = false) {
        self.roundTripLimit = roundTripLimit
        self.minimumUpdateInterval = minimumUpdateInterval
        self.pollInterval = pollInterval
        self.calibrationWindow = min(1024, max(2, calibrationWindow))
        self.adaptsRoundTripLimit = adaptsRoundTripLimit
    }

    // Why these values (issue 17; `Scripts/bench-network --sections clock`: probes side by side, each behind its own
    // 20 ± 5 ms relay, 2 busy cores at load 4-13; true error = |the clock's reading − CLOCK_MONOTONIC|, which every
    // namespace shares; p99 from 0.4 s after sync, when a member joins). Each exchange's offset is off by half its
    // path asymmetry (σ ≈ 2 ms here). GStreamer fits a line through the last `calibrationWindow` accepted exchanges
    // and reads the clock off it at *now*, the window's end, where a line's error is about twice its mean's:
    // σ_now ≈ 2σ/√N. So the count N matters, and how fast the window fills:
    //  - previous (poll 20 ms, window 128; ~32 exchanges/s): p99 0.78-4.1 ms, median of 9 runs 1.7 ms;
    //  - poll 5 ms, window 1024 (GStreamer's maximum; ~150 exchanges/s, several requests in flight behind the
    //    relay, 1024 span ~7 s): median of 12 runs 0.76 ms but up to 3.5 ms: delayed exchanges (a busy machine
    //    reading an answer late) are off by 3-13 ms and a big window keeps them for its whole span;
    //  - the same with the adaptive round-trip limit (`RoundTripLimitPolicy`: shortest + 2 × (median − shortest),
    //    ~50 ms here): median of 8 runs 0.59 ms, at most 0.99 ms;
    //  - a limit near the shortest round trip (shortest + 3 or 5 ms) does select small asymmetries (exchanges
    //    within 2 ms of the shortest: 0.1-0.7 ms off, against ~2 ms for the middle of the spread) but is erratic
    //    (p99 0.32-1.8 ms): GStreamer waits 250 ms after each exchange it discards, so ~17 remain a second;
    //  - poll 10 ms: 0.69-1.08 ms; window 512 (member rows): worse than 1024.
    // Costs: the probe's CPU 36-59 ms/s against 14-17 (debug build: per exchange, the statistics handed to Swift),
    // ~150 small datagrams a second each way; sync unchanged (50-160 ms), settled sooner (40-290 ms after sync
    // against 440-850). Loopback (no relay): p99 0.02-0.05 ms either way (GStreamer's own 2 × median filter and its
    // 250 ms pauses keep it at ~20 exchanges a second there).

    /// The tuning every `NetClientClock` gets unless told otherwise.
    public static let standard = NetClockTuning(roundTripLimit: .milliseconds(200), minimumUpdateInterval: .milliseconds(5),
                                                pollInterval: .milliseconds(5), calibrationWindow: 1024,
                                                adaptsRoundTripLimit: true)
    /// The tuning before issue 17's second round (poll 20 ms, window 128): the bench's "before" rows.
    public static let previous = NetClockTuning(roundTripLimit: .milliseconds(200), minimumUpdateInterval: .milliseconds(20),
                                                pollInterval: .milliseconds(20), calibrationWindow: 128)
    /// GStreamer's own defaults (round trip 1 s, 50 ms, poll 100 ms, window 32).
    public static let gstreamerDefaults = NetClockTuning(roundTripLimit: .seconds(1), minimumUpdateInterval: .milliseconds(50),
                                                         pollInterval: .milliseconds(100), calibrationWindow: 32)

    /// The named tunings, for hidden bench flags ("standard", "previous", "gstreamer").
    public static let named: [String: NetClockTuning] = ["standard": .standard, "previous": .previous,
                                                         "gstreamer": .gstreamerDefaults]
}
