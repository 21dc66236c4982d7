/// What `AudioClockGuard` answers for one reading of an audio sink's clock: the guard's decisions without
/// GStreamer, PulseAudio or locks, so that each can be tested with injected readings and instants (all in ns;
/// instants on the monotonic clock `gst_util_get_timestamp` reads).
///
/// Three rules, in this order:
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

    public init(window: UInt64, jumpTolerance: UInt64 = 10_000_000_000, absurdTime: UInt64 = 86_400_000_000_000) {
        self.window = window
        self.jumpTolerance = jumpTolerance
        self.absurdTime = absurdTime
    }

    /// The next start of the sink happens no earlier than `instant`.
    public mutating func arm(at instant: UInt64) { armedAfter = instant }

    /// The sink's PulseAudio stream is gone for good: never ask it again.
    public mutating func markLost() { isLost = true }

    /// Rules 1 and 2, at `now`, before asking the sink.
    public mutating func beforeAsking(now: UInt64) -> Ask {
        if isLost { return .lost }
        guard now >= windowStart, now < windowEnd else { return .askSink }
        extrapolated += 1
        return .answer(windowBase &+ (now - windowStart))
    }

    /// Rule 3 and the window's opening, for the sink's `reading` asked at `now`: the time to answer, nil for
    /// "none". A "none" from the sink stays "none".
    public mutating func afterAsking(reading: UInt64?, now: UInt64) -> UInt64? {
        guard let reading else { return nil }
        if let accepted {
            let expected = accepted.reading &+ (now > accepted.at ? now - accepted.at : 0)
            if reading > expected, reading - expected > jumpTolerance {
                refused += 1
                return expected
            }
        } else if reading > absurdTime {
            refused += 1
            return nil
        }
        accepted = (reading, now)
        if let after = armedAfter, now >= after {
            armedAfter = nil
            windowStart = now
            windowEnd = now &+ window
            windowBase = reading
            windows += 1
        }
        return reading
    }
}
