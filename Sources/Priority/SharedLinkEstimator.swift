/// The throughput of the one link all HLS views share, from the bytes they actually receive.
///
/// Input: chunk arrivals — "download stream S got N bytes at time t" — from every view together (hlsdemux2 hands
/// what it downloads to its parsers, one per stream (video, audio), as it arrives: whole 32 KB blocks, several
/// merged when its thread fell behind, and the transfer's remainder last — so a chunk that is not a whole number
/// of blocks ends a transfer; measured on GStreamer 1.22). A chunk that follows another of the same transfer was on the wire between the
/// two arrivals, so it is a sample (start, end, bytes). The first chunk of a transfer is different: the time
/// before it holds the request's latency and whatever idle time preceded the request. It is counted once the
/// second chunk shows the transfer's pace: as if it had arrived at that pace (its bytes over the second chunk's
/// duration × size ratio, ending when it arrived). Leaving its bytes out would under-count every busy moment
/// another view's transfer began in (~20 % with four views of 5-chunk fragments, measured).
///
/// A transfer's last chunk (a remainder) is taken to have been on the wire for no longer than twice what its bytes
/// (at least a whole block) take at the transfer's pace so far: a tail handed over later (a busy demuxer thread)
/// followed time in which the link carried nothing of that transfer.
///
/// Estimate = bytes of all samples in a window ÷ the *union* of their intervals (the time at least one download
/// was active). Overlapping downloads add their bytes over the same busy time (each sees a share, together they
/// see the link); downloads one after another each see the whole link and add busy time as well as bytes; time
/// when nobody downloads is in no interval, so an ON-OFF pattern (Akhshabi et al., NOSSDAV 2012: a capped
/// player idles between segments and then under-measures) does not count as low throughput. The window reaches
/// back until it holds `windowBusy` of busy time (at most `horizon`); the confidence is the busy time found ÷
/// `windowBusy`.
///
/// Published estimate (FESTIVE-style, from the first confident measurement on): it follows a lower measurement at once (a link that shrank must be
/// believed before the buffers drain) and rises towards a higher one by at most `riseRate` per second (a burst
/// does not lift the budget; a link that grew does within seconds).
///
/// Pure value type: time is whatever `Duration` since an epoch the caller passes in (tests feed synthetic
/// traces; `PriorityManager` passes its clock's reading). Not thread-safe by itself: one owner mutates it.
public struct SharedLinkEstimator: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Busy time the window should hold for a full-confidence measurement.
        public var windowBusy: Duration
        /// How far back samples are kept and the window may reach.
        public var horizon: Duration
        /// The demuxer's read size: chunks are whole multiples of it until a transfer's last one.
        public var blockSize: Int
        /// Two chunks of one stream further apart than this belong to different transfers.
        public var maxChunkGap: Duration
        /// Largest rise of the published estimate, as a fraction per second.
        public var riseRate: Double
        /// Confidence at which the estimate may be acted upon: half the window's busy time (1.5 s of downloads,
        /// dozens of chunks) already measures a paced or shaped link within a few percent; waiting for more would
        /// keep a lone capped view (busy 10 % of the time) unconfident for half a minute.
        public var confidentAt: Double

        public init(blockSize: Int = 32768, windowBusy: Duration = .seconds(3), horizon: Duration = .seconds(20),
                    maxChunkGap: Duration = .milliseconds(1500), riseRate: Double = 0.15, confidentAt: Double = 0.5) {
            self.blockSize = blockSize; self.windowBusy = windowBusy; self.horizon = horizon; self.maxChunkGap = maxChunkGap
            self.riseRate = riseRate; self.confidentAt = confidentAt
        }
    }

    /// What the estimator believes now.
    public struct Estimate: Sendable, Equatable {
        /// The published link rate (bits/s): smoothed, rises slowly, falls at once.
        public var bitsPerSecond: Int
        /// The last window's raw measurement (bits/s).
        public var measured: Int
        /// 0…1: busy time in the window ÷ `windowBusy`.
        public var confidence: Double
        /// Busy time the measurement rests on.
        public var busy: Duration
        public var isConfident: Bool
    }

    /// One piece of transfer whose time on the wire is known.
    struct Sample: Sendable, Equatable {
        var start: Duration
        var end: Duration
        var bytes: Int
    }

    private struct StreamState: Sendable {
        var lastArrival: Duration
        /// The last chunk was not a whole number of blocks: it ended its transfer.
        var lastEnded: Bool
        /// The first chunk of the current transfer (arrival, bytes), until the second one shows its pace.
        var first: (time: Duration, bytes: Int)?
        /// Bytes and time on the wire of the current transfer's samples so far: its pace.
        var paceBytes = 0
        var paceTime: Duration = .zero
    }

    public let configuration: Configuration
    private var streams: [Int: StreamState] = [:]
    private(set) var samples: [Sample] = []
    private var published: Double?
    private var publishedAt: Duration?
    /// A confident measurement was published: from then on the figure rises slowly.
    private var settled = false
    public private(set) var estimate: Estimate?

    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Download stream `stream` (any key unique among all views' streams) received `bytes` at `time` (one
    /// timeline for all streams, not decreasing per stream).
    public mutating func received(bytes: Int, stream: Int, at time: Duration) {
        guard bytes > 0 else { return }
        if var state = streams[stream] {
            let gap = time - state.lastArrival
            if !state.lastEnded && gap > .zero && gap <= configuration.maxChunkGap {
                if let first = state.first {
                    let lead = gap * (Double(first.bytes) / Double(bytes))
                    samples.append(Sample(start: first.time - lead, end: first.time, bytes: first.bytes))
                    state.paceBytes = first.bytes
                    state.paceTime = lead
                }
                var start = state.lastArrival
                if bytes % max(1, configuration.blockSize) != 0 && state.paceBytes > 0 && state.paceTime > .zero {
                    // The transfer's last chunk: on the wire for at most twice what its bytes (at least a whole
                    // block) take at the transfer's pace. A longer gap before it is the demuxer's thread handing it
                    // over late (a busy CPU), or a retransmission timeout, while the link carried nothing of this
                    // transfer; counted as busy time, every such tail pulled the estimate down (4 ON-OFF views on
                    // 7 Mbit/s with each tail handed over 0.5 s late: 5.1 Mbit/s; SharedLinkEstimatorTests).
                    // Twice, not once: a shaped link's token bucket lets a transfer's first blocks through at once
                    // after an idle spell, so its pace so far can be above the link's (held to once, the tc-shaped
                    // link read up to 7.9 Mbit/s of 7).
                    let atPace = state.paceTime * (2 * Double(max(bytes, configuration.blockSize)) / Double(state.paceBytes))
                    start = max(start, time - atPace)
                }
                samples.append(Sample(start: start, end: time, bytes: bytes))
                state.paceBytes += bytes
                state.paceTime += time - start
                state.first = nil
            } else {
                state.first = (time, bytes)
                state.paceBytes = 0
                state.paceTime = .zero
            }
            state.lastEnded = bytes % max(1, configuration.blockSize) != 0
            state.lastArrival = time
            streams[stream] = state
        } else {
            streams[stream] = StreamState(lastArrival: time, lastEnded: bytes % max(1, configuration.blockSize) != 0,
                                          first: (time, bytes))
        }
    }

    /// The stream stopped (its view detached or reloaded): its next chunk starts a new transfer.
    public mutating func forget(stream: Int) { streams[stream] = nil }

    /// Recomputes the measurement at `now` and moves the published estimate (call periodically). Returns the
    /// estimate, nil before any sample was measured.
    @discardableResult
    public mutating func update(now: Duration) -> Estimate? {
        samples.removeAll { $0.end < now - configuration.horizon }
        guard let (bits, busy) = measure(now: now) else {
            // Nothing downloaded within the horizon: keep the last belief, with no confidence left.
            if var old = estimate { old.confidence = 0; old.busy = .zero; old.isConfident = false; estimate = old }
            return estimate
        }
        let confidence = min(1, busy.asSeconds / configuration.windowBusy.asSeconds)
        let confident = confidence >= configuration.confidentAt
        if let previous = published, let at = publishedAt, settled {
            if bits < previous {
                published = bits
            } else {
                let seconds = max(0, (now - at).asSeconds)
                published = min(bits, previous * (1 + configuration.riseRate * seconds))
            }
        } else {
            published = bits
        }
        publishedAt = now
        // Until the first confident measurement the figure follows the measurement freely: a start measured
        // from a few chunks must not become the floor that the slow rise then climbs from for seconds.
        if confident { settled = true }
        estimate = Estimate(bitsPerSecond: Int(published ?? bits), measured: Int(bits), confidence: confidence,
                            busy: busy, isConfident: confident)
        return estimate
    }

    /// Bits per second over the shortest window ending at `now` that holds `windowBusy` of busy time (or the
    /// whole horizon), and that busy time; nil when no sample lies in the horizon.
    func measure(now: Duration) -> (bitsPerSecond: Double, busy: Duration)? {
        guard !samples.isEmpty else { return nil }
        var reach = Duration.seconds(1)
        while true {
            let from = now - reach
            let (bytes, busy) = Self.bytesAndBusy(samples, from: from, to: now)
            if busy >= configuration.windowBusy || reach >= configuration.horizon {
                guard busy > .zero else { return nil }
                return (Double(bytes) * 8 / busy.asSeconds, busy)
            }
            reach += .milliseconds(500)
        }
    }

    /// Bytes of the samples inside [from, to] (a sample cut by `from` counts in proportion) and the length of
    /// the union of their intervals.
    static func bytesAndBusy(_ samples: [Sample], from: Duration, to: Duration) -> (bytes: Double, busy: Duration) {
        var bytes = 0.0
        var intervals: [(Duration, Duration)] = []
        for sample in samples where sample.end > from && sample.start < to {
            let start = max(sample.start, from), end = min(sample.end, to)
            let whole = (sample.end - sample.start).asSeconds
            let part = (end - start).asSeconds
            bytes += whole > 0 ? Double(sample.bytes) * part / whole : 0
            intervals.append((start, end))
        }
        intervals.sort { $0.0 < $1.0 }
        var busy = Duration.zero
        var current: (Duration, Duration)?
        for interval in intervals {
            if let c = current, interval.0 <= c.1 {
                current = (c.0, max(c.1, interval.1))
            } else {
                if let c = current { busy += c.1 - c.0 }
                current = interval
            }
        }
        if let c = current { busy += c.1 - c.0 }
        return (bytes, busy)
    }
}

extension Duration {
    /// Seconds as a Double (kept here so the pure type needs nothing from GStreamer).
    fileprivate var asSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
