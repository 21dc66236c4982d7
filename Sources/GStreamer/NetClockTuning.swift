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
    // 20 ± 5 ms relay, 2 busy cores at load 4-18; true error = |the clock's reading − CLOCK_MONOTONIC|, which every
    // namespace shares; p99 from 0.4 s after sync, when a member joins). Each exchange's offset is off by half its
    // path asymmetry (σ ≈ 2 ms here). GStreamer fits a line through the last `calibrationWindow` accepted exchanges
    // and reads the clock off it at *now*, the window's end, where a line's error is about twice its mean's:
    // σ_now ≈ 2σ/√N. So the count N matters, and how fast the window fills:
    //  - previous (poll 20 ms, window 128; ~30 exchanges/s): p99 0.78-9.0 ms, median of 13 runs 1.95 ms;
    //  - poll 5 ms, window 1024 (GStreamer's maximum; ~150 exchanges/s, several requests in flight behind the
    //    relay, 1024 span ~7 s): median of 14 runs 1.08 ms, up to 3.5 ms: delayed exchanges (a busy machine
    //    reading an answer late) are off by 3-15 ms and a big window keeps them for its whole span;
    //  - the same with the adaptive round-trip limit (`RoundTripLimitPolicy`: shortest + 2 × (median − shortest),
    //    ~50 ms here): median of 12 runs 0.8 ms (0.34-1.2 up to load 13; 3.2-16 at load 16-18), lower than the
    //    previous tuning's in 7 of 8 side-by-side pairs;
    //  - a limit near the shortest round trip (shortest + 3 or 5 ms) does select small asymmetries (exchanges
    //    within 2 ms of the shortest: 0.1-0.7 ms off, against ~2 ms for the middle of the spread) but is erratic
    //    (p99 0.32-12 ms): GStreamer waits 250 ms after each exchange it discards, so ~17 remain a second;
    //  - poll 10 ms: 0.68-2.5 ms.
    // Costs: the probe's CPU 24-59 ms/s against 11-17 (debug build: per exchange, the statistics handed to Swift),
    // ~150 small datagrams a second each way; sync unchanged (50-200 ms); settled mostly sooner (40-500 ms after
    // sync against 410-850). Loopback (no relay): p99 0.02-0.05 ms either way up to load ~8, 0.1-0.5 ms against
    // 0.03-0.04 at load 10-17 (GStreamer's 2 × median filter and its 250 ms pauses hold loopback to ~20 exchanges
    // a second, so 1024 of them span ~45 s there). In the member rows (`--sides coord-prev,coordinated,…`) the
    // true video spread p99 was under 1 ms in 5 of 10 rows against 0 of 8; the misses are bursts (a member's start
    // or seek keeps its own process busy, its exchanges are stamped late, its clock moves 2-4 ms and the 1024
    // window keeps that ~7 s). Tried and left out: window 512 (one run, not better), SCHED_FIFO for the polling
    // thread (one run, no gain, loopback worse).

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
