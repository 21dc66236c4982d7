/// What `AudioClockGuard` answers for one reading of an audio sink's clock: the guard's decisions without
/// GStreamer, PulseAudio or locks, so that each can be tested with injected readings and instants (all in ns;
/// instants on the monotonic clock `gst_util_get_timestamp` reads).
///
/// Four rules, in this order:
/// 1. **Lost sink.** Once the sink's PulseAudio stream is known lost, every reading is answered "none" (the audio
///    clock then repeats its last time) without asking the sink. Asking a dead pulsesink posts an error with
///    PulseAudio's mainloop lock held; when audiobasesink asks from its start (it holds the sink's object lock
///    there, and the error takes that lock again), the thread deadlocks on itself (see `AudioClockGuard`).
/// 2. **Start window.** The first sink reading at or after an armed instant (audiobasesink's calibration, taken
///    while the stream is still corked) opens a window of `window`; readings inside it get that reading plus the
///    time elapsed since, without asking the sink (libpulse's stream time is garbage right after an uncork).
/// 3. **Absurd jumps.** A sink reading more than `jumpTolerance` ahead of where the last accepted reading would
///    have run to by now is refused: stream time cannot run faster than real time, so such a reading is libpulse's
///    unsigned wrap (hundreds of years ahead, or 8.5 years in the latency it derives), which then sticks for the
///    stream's life. It is answered by extrapolating the last accepted reading, for as long as the sink's readings
///    stay absurd. Without an accepted reading yet, a reading beyond `absurdTime` is refused with "none".
/// 4. **Time that ran while stopped.** When the sink's device is stopped (the pipeline PAUSED: pulsesink corks its
///    stream), the player notes the stream's time then (`stopped`). The next window-opening reading (the start's
///    calibration) more than `stopTolerance` beyond it is time libpulse counted while the stream was corked (seen
///    on busy null sinks after a fresh stream's priming: 0.4–3.3 s): the calibration would place every sample that
///    far ahead of what the server plays, the sink's writes would block that long and the view's video would starve
///    behind its full audio queue (issue 15, the soak's added view). The window opens from the stopped time
///    instead, and until a sink reading comes back within `realTimeTolerance` of real time from there (libpulse holds
///    its time until the stream's real position catches up), readings ahead of that extrapolation are answered
///    with it (readings behind it are taken) — for at most the refused excess plus `absorbLimit`. Unless libpulse
///    keeps the excess and runs on with real time (a constant offset): once a reading has run with real time since
///    the one before and, less the refused excess, is not ahead of the extrapolation, the readings less the excess
///    are answered, behind it too (the server's late start and its lags, for the follower to see), with no limit
///    (answered by extrapolation only until the limit, such a stream's readings came back the excess ahead and the
///    follower moved its playout that far: the same freeze, a few seconds later).
///    What counts as the stopped time: a new sink's stream has never played, so it starts at 0 (the soak's HLS
///    views, given new streams when PulseAudio came back, were first started 12 s later with libpulse saying 6.6 s
///    for streams that had never been uncorked; placed that far ahead, each view froze behind its blocked audio).
///    A stop is noted at the least of the sink's reading, what the guard's own answers have run to since (while
///    rule 4 absorbs, libpulse is still ahead: its reading is not the stream's position) and an earlier stop not
///    followed by a start (a stream does not move while stopped). A reading that opens no window comes from a sink
///    that renders, so it ends the noted stop; a start's opening reading ends an absorption still running and is
///    judged afresh (those streams' libpulse time ran on at every later pause as well: 2.3 and 3.2 s).
///
/// Ownership: a value type; `AudioClockGuard` keeps it in its `Mutex`.
public struct AudioClockReadingPolicy: Sendable {
    /// How long after an armed start readings are extrapolated instead of asked.
    public var window: UInt64
    /// How far a reading may run ahead of the last accepted one's extrapolation (server catch-up after a stall,
    /// timing jitter) before it counts as absurd.
    public var jumpTolerance: UInt64
    /// A first reading beyond this (no accepted reading to extrapolate from) is absurd.
    public var absurdTime: UInt64
    /// How far a window-opening reading may be beyond the stream's time noted at its stop before the excess counts
    /// as time that ran while stopped (rule 4). A second: shorter excesses block the sink for less than its
    /// pipeline's queues hold (the video plays on) and the follower settles them audibly right, while refusing them
    /// (60 or 250 ms here) put the by-ear test's hand-started control 3-27 ms off in 3 of 6 runs (its first view
    /// showed 0.27 s each time). The video-starving excesses seen were 2.7-3.3 s.
    public var stopTolerance: UInt64
    /// How long after the refused excess has run out rule 4 still answers readings ahead of the extrapolation
    /// with it (a bound, should libpulse's time never come back).
    public var absorbLimit: UInt64
    /// After a rule-4 refusal, a reading this close to the extrapolation is real time again (ends the absorption).
    public var realTimeTolerance: UInt64

    /// Before asking the sink: answer without asking, or ask.
    public enum Ask: Equatable, Sendable {
        case askSink
        /// Answer this time (ns) without asking.
        case answer(UInt64)
        /// Answer "no time" (`GST_CLOCK_TIME_NONE`) without asking, and keep the sink from starting.
        case lost
    }

    /// Monotonic ns after which the next sink reading opens a window; nil when not armed.
    public private(set) var armedAfter: UInt64?
    private var windowStart: UInt64 = 0
    private var windowEnd: UInt64 = 0
    private var windowBase: UInt64 = 0
    /// The last sink reading let through, and when.
    private var accepted: (reading: UInt64, at: UInt64)?
    public private(set) var isLost = false
    public private(set) var extrapolated = 0
    public private(set) var windows = 0
    public private(set) var refused = 0
    /// Window-opening readings refused as time that ran while the sink was stopped (rule 4), and the last excess.
    public private(set) var stoppedTimeRefused = 0
    public private(set) var lastStoppedExcess: UInt64 = 0
    /// While absorbing (rule 4), nil otherwise: until when readings ahead of the extrapolation by more than
    /// `realTimeTolerance` are answered with it, how far libpulse's time was ahead of the stream's, its last reading
    /// and when, and whether libpulse kept that excess and ran on with real time.
    private var absorbing: (until: UInt64, excess: UInt64, last: (reading: UInt64, at: UInt64), kept: Bool)?
    /// The stream's time when its device was last stopped, until the next window opens (rule 4). 0 at first: the
    /// guard is installed on a new sink, whose stream has never played.
    public private(set) var stoppedReading: UInt64? = 0
    /// The last window-opening reading and the stopped time it was judged against (nil: none noted): what a
    /// stalled start's diagnosis needs.
    public private(set) var lastOpening: (reading: UInt64, stopped: UInt64?)?

    public init(window: UInt64, jumpTolerance: UInt64 = 10_000_000_000, absurdTime: UInt64 = 86_400_000_000_000,
                stopTolerance: UInt64 = 1_000_000_000, absorbLimit: UInt64 = 250_000_000,
                realTimeTolerance: UInt64 = 50_000_000) {
        self.window = window
        self.jumpTolerance = jumpTolerance
        self.absurdTime = absurdTime
        self.stopTolerance = stopTolerance
        self.absorbLimit = absorbLimit
        self.realTimeTolerance = realTimeTolerance
    }

    /// The next start of the sink happens no earlier than `instant`.
    public mutating func arm(at instant: UInt64) { armedAfter = instant }

    /// The sink's device stopped (its stream corked) with the stream's time at `reading` (asked at `now`): the
    /// next start cannot find it further on (rule 4). A reading rule 3 would refuse is not noted.
    public mutating func stopped(reading: UInt64, now: UInt64) {
        var position = reading
        if let accepted {
            let expected = accepted.reading &+ (now > accepted.at ? now - accepted.at : 0)
            guard reading <= expected || reading - expected <= jumpTolerance else { return }
            // Where the answers the sink was given have run to: behind libpulse's reading while rule 4 absorbs.
            position = min(position, expected)
        } else if reading > absurdTime {
            return
        }
        // No start since an earlier stop: the stream is still where that stop found it.
        if let earlier = stoppedReading { position = min(position, earlier) }
        stoppedReading = position
    }

    /// The sink's PulseAudio stream is gone for good: never ask it again.
    public mutating func markLost() { isLost = true }

    /// Rules 1 and 2, at `now`, before asking the sink.
    public mutating func beforeAsking(now: UInt64) -> Ask {
        if isLost { return .lost }
        guard now >= windowStart, now < windowEnd else { return .askSink }
        extrapolated += 1
        return .answer(windowBase &+ (now - windowStart))
    }

    /// Rules 3 and 4 and the window's opening, for the sink's `reading` asked at `now`: the time to answer, nil for
    /// "none". A "none" from the sink stays "none".
    public mutating func afterAsking(reading: UInt64?, now: UInt64) -> UInt64? {
        guard let reading else { return nil }
        // The start's calibration, judged even while an earlier start's excess is still absorbed (a pause and a
        // resume inside the absorption: the soak's views are commanded every 4 s).
        let opening = armedAfter.map { now >= $0 } ?? false
        // Any other reading comes from a sink that renders: its stream runs, the stop noted before no longer holds.
        if !opening { stoppedReading = nil }
        if let accepted {
            let expected = accepted.reading &+ (now > accepted.at ? now - accepted.at : 0)
            if reading > expected, reading - expected > jumpTolerance {
                refused += 1
                return expected
            }
            if !opening, let current = absorbing {
                let until = current.until, excess = current.excess, last = current.last
                // libpulse ran with real time since a reading at least twice the tolerance ago (not held, not
                // racing ahead; readings a few ms apart cannot tell a held time from a running one)...
                let apart = now > last.at && now - last.at >= 2 * realTimeTolerance
                let running = apart && reading >= last.reading
                    && distance(reading - last.reading, now - last.at) <= realTimeTolerance
                if apart { absorbing?.last = (reading, now) }
                // ...and, less the excess, is not ahead of the stream: it kept the excess. Its readings less the
                // excess are then the stream's, behind the extrapolation too (the server began the stream late,
                // or lags under load: the follower sees it, as on any stream), with no limit.
                if !current.kept, running, reading >= excess, reading - excess <= expected &+ realTimeTolerance {
                    absorbing?.kept = true
                }
                if absorbing?.kept == true {
                    guard reading > expected &+ realTimeTolerance, reading >= excess else {
                        endAbsorbing()   // libpulse dropped the excess: its readings are the stream's again
                        self.accepted = (reading, now)
                        return reading
                    }
                    self.accepted = (reading - excess, now)
                    return reading - excess
                }
                // Held (or racing ahead). Behind the extrapolation a reading is taken (the follower sees it), still
                // absorbing.
                if reading > expected {
                    if reading - expected <= realTimeTolerance {
                        endAbsorbing()   // back with real time: the sink's readings are real again
                    } else if now < until {
                        return expected
                    } else {
                        endAbsorbing()   // the limit: the sink's readings are taken again, whatever they say
                    }
                }
            }
        } else if reading > absurdTime {
            refused += 1
            return nil
        }
        var answer = reading
        if opening {
            armedAfter = nil
            endAbsorbing()
            lastOpening = (reading, stoppedReading)
            if let stopped = stoppedReading, reading > stopped, reading - stopped > stopTolerance {
                // Rule 4: the stream cannot have run while the sink was stopped.
                stoppedTimeRefused += 1
                lastStoppedExcess = reading - stopped
                absorbing = (now &+ lastStoppedExcess &+ absorbLimit, lastStoppedExcess, (reading, now), false)
                answer = stopped
            }
            stoppedReading = nil
            windowStart = now
            windowEnd = now &+ window
            windowBase = answer
            windows += 1
        }
        accepted = (answer, now)
        return answer
    }

    private mutating func endAbsorbing() { absorbing = nil }

    private func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }
}
