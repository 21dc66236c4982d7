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

    // Why these values (issue 17, measured behind Scripts/lib/delay-relay.py's 20 ± 5 ms per direction, 2 busy
    // cores; true error = the clock's reading − CLOCK_MONOTONIC, which every namespace shares). Each exchange's
    // offset is off by half its path asymmetry: with uniform ± 5 ms per direction that is ±5 ms, σ ≈ 2 ms,
    // whatever the round trip. GStreamer fits a line through the last `calibrationWindow` exchanges and reads the
    // clock off that line at *now*, the window's end, where a line's error is about twice its mean's:
    // σ_now ≈ 2σ/√N. So only the count of exchanges in the window (N) and how fast it fills matter:
    //  - window 128 (the previous tuning): σ_now ≈ 0.36 ms, p99 ≈ 1 ms per member, as measured (0.97-1.12 ms);
    //  - window 1024 (GStreamer's maximum): σ_now ≈ 0.13 ms once full;
    //  - polling every 5 ms instead of 20 fills it 4× faster (~130 accepted exchanges a second behind the relay:
    //    replies overlap, several requests are in flight), which is what a member joining 0.3-0.4 s after sync
    //    sees in its first seconds, and 1024 exchanges span ~8 s, short enough to follow real oscillators' drift.
    // A tighter round-trip limit (near the minimum RTT, where the asymmetry is small) does not pay with
    // GStreamer's clock: each discarded exchange holds the next poll back 250 ms, and with uniform jitter the
    // few exchanges it keeps carry less information per second than all of them (see
    // `Scripts/bench-network --sections clock`: "limit min+…" rows). Figures: ARCHITECTURE.md, net clock.

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
