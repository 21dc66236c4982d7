/// Where a PulseAudio playback stream plays now, from the server's own timing snapshots: each says which stream
/// time the device played at one server instant (read index as time − sink latency, at the server's clock).
///
/// Why not libpulse's `pa_stream_get_time` (what pulsesink's clock reads): libpulse feeds those snapshots into a
/// rate-estimating smoother (`pa_smoother_2`), stamped with the instant the reply *reached the client* minus the
/// request's trip, not with the server's own instant. The smoother starts over at every uncork and flush and anchors
/// its line on the first snapshot after it; a reply that waited in a busy client shifts that anchor, and the
/// smoother then bends its rate for seconds to fit the later snapshots. Measured across processes
/// (`Scripts/bench-network`, 8 members on two cores): one member's reports ran −3.5 → −20 ms over 4 s after a
/// seek while its recorded clicks did not move, and `AudioClockFollower` corrected the sound 20 ms off.
///
/// The server's snapshots need no smoothing: a device plays at its own rate (a null sink exactly at the server's
/// clock, a sound card within 0.1 ms per second), so the played stream time minus the server instant is one number
/// (the offset) as long as the stream's timeline runs on. A cork, a flush or an underrun changes it at once, by
/// much more than the snapshots' own error. So the estimate is the median offset of the latest snapshots that
/// agree with each other (within `tolerance`), at least `minimumAgreeing` of them, and nothing before.
///
/// Pure value, owned by one `PulseTimingTap` (behind its lock).
public struct PulsePlayoutEstimator: Sendable, Equatable {
    /// One timing snapshot of the server, as pulsesink logs it.
    public struct Snapshot: Sendable, Equatable {
        /// The server's clock (CLOCK_REALTIME) when it answered, in ns.
        public var serverTime: Int64
        /// The stream's read index (bytes the device has taken).
        public var readIndex: Int64
        /// The device's latency after the read index (how long before those bytes are heard), in µs.
        public var sinkLatencyMicroseconds: Int64

        /// Played stream time minus the server's instant, in ns.
        func offset(bytesPerSecond: Int64) -> Int64 {
            let played = readIndex.multipliedFullWidth(by: 1_000_000_000)
            let (seconds, _) = bytesPerSecond.dividingFullWidth(played)
            return seconds - sinkLatencyMicroseconds * 1_000 - serverTime
        }
    }

    /// How many agreeing snapshots are kept (libpulse asks every 10-40 ms after a start, then every 1.5 s).
    public var capacity = 5
    /// Two snapshots whose offsets differ by more than this are on different timelines (a cork, a flush or an
    /// underrun in between); a server answer delayed by load moves one by a few hundred µs.
    public var tolerance: Int64 = 2_000_000
    /// No estimate from fewer agreeing snapshots than this.
    public var minimumAgreeing = 2

    /// Snapshots since the last restart, newest last (at most `capacity` after the last disagreement).
    private(set) var snapshots: [Snapshot] = []
    /// Snapshots answered before this server instant are from before the sink's last discontinuity.
    private var notBefore: Int64 = .min

    public init() {}

    /// The sink recalibrated (its stream was flushed, corked or replaced): snapshots answered before `serverTime`
    /// say nothing about the timeline from now on.
    public mutating func restart(at serverTime: Int64) {
        snapshots.removeAll(keepingCapacity: true)
        notBefore = serverTime
    }

    public mutating func add(_ snapshot: Snapshot) {
        guard snapshot.serverTime >= notBefore else { return }
        snapshots.append(snapshot)
        if snapshots.count > capacity + 1 { snapshots.removeFirst() }
    }

    /// The stream time playing at server instant `serverTime` (ns), or nil without enough agreeing snapshots.
    public func streamTime(at serverTime: Int64, bytesPerSecond: Int64) -> Int64? {
        guard bytesPerSecond > 0 else { return nil }
        // The latest run of agreeing offsets, newest first: a new timeline starts where one disagrees with the newest.
        let offsets = snapshots.reversed().map { $0.offset(bytesPerSecond: bytesPerSecond) }
        guard let newest = offsets.first else { return nil }
        var run: [Int64] = []
        for offset in offsets {
            guard abs(offset - newest) <= tolerance, run.count < capacity else { break }
            run.append(offset)
        }
        guard run.count >= minimumAgreeing else { return nil }
        return serverTime + run.sorted()[run.count / 2]
    }
}
