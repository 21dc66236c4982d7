import CGStreamer
import Synchronization

/// Shields an audio sink's own clock (the `GstAudioClock` a `GstAudioBaseSink` reads its device time from) from
/// being read in the moments right after its device starts, and answers those reads by extrapolating from the
/// last reading before the start.
///
/// Why: libpulse (PulseAudio 16) resumes a playback stream's time smoother at "now + transport latency" when the
/// stream is uncorked; `pa_stream_get_time` called before that instant computes `now − resume` in unsigned
/// arithmetic and returns a time hundreds of years ahead, and because stream time must never go backwards that
/// value then sticks for the stream's whole life. audiobasesink reads the sink's clock microseconds after its
/// ringbuffer starts (uncorks), so each start is a race; the by-ear test lost it in several runs on two cores,
/// with and without other load, after which `AudioClockFollower` sees only absurd skews (it ignores them: the view's audio stays wherever the
/// start left it, 2–4 ms off) and the next seek calibrates on the absurd time (the view is silent from then on).
///
/// How: `arm(after:)` before a start. The first reading at or after that instant (audiobasesink's calibration,
/// taken before the uncork) goes to the sink as usual and opens a window of `window`; readings inside it get that
/// reading plus the time elapsed since, without asking the sink. The stream was corked, so its time was frozen
/// at that reading and runs with real time from the uncork on: the extrapolation is what the sink would report.
///
/// Absurd readings (`AudioClockReadingPolicy` rule 3): libpulse's wrap can also happen outside the window (issue
/// 15 row 5: an audio-only view stayed BUFFERING 0% after a seek, its stream reporting 8.5 years); a reading
/// that runs ahead of real time by more than 10 s is refused and the last good one extrapolated instead.
///
/// Time counted while stopped (`AudioClockReadingPolicy` rule 4): on a busy null sink libpulse sometimes lets a
/// corked stream's time run on (a fresh stream primed, then paused until its coordinated start), so the start's
/// calibration would sit that far ahead of what the server plays and the sink's writes would block that long (the
/// soak's frozen added view). The player notes the stream's time when it pauses (`noteStopped`); a start's window
/// then opens from there.
///
/// A lost stream (issue 15, the PulseAudio-kill hang): GStreamer 1.22's pulsesink posts an error (`Disconnected`,
/// `pa_stream_cork() failed`) while it holds PulseAudio's process-wide mainloop lock. audiobasesink asks a
/// clock-following sink's clock, then starts its ring buffer (which uncorks the stream), at the start of every
/// play, with the sink's object lock held; the error's message builds the sink's path, which takes that lock
/// again: the streaming thread deadlocks on itself and keeps the mainloop lock, and every thread of the process
/// that touches PulseAudio (other views' clock reads through `time`, state changes, teardown) blocks for good.
/// So the guard learns that its stream is gone before that moment and then neither asks the sink nor lets that
/// start reach it: `arm` asks the sink once, on the arming thread (no GStreamer lock held: a dead stream's error
/// is posted there harmlessly), and the bus's sync handler marks the guard lost when its sink posts an error
/// (`noteError(postedBy:)`, on the posting thread, before `arm` returns). A lost guard answers every reading
/// with "none" and clears the ring buffer's may-start flag, so audiobasesink's start skips pulsesink's; the
/// player replaces the sink when the error reaches it. What is left: the server dying between `arm` and the
/// start instant it arms for (the start margin).
///
/// Threading: the clock calls `time` on whichever thread reads it (streaming threads, PulseAudio's thread); the
/// state lives in one `Mutex`. The guard is installed when the sink is created, before any thread can read its
/// clock, so swapping the clock's function and data pointers never races with a reader.
public final class AudioClockGuard: Sendable {
    /// The sink's own clock function and its data (the sink itself).
    private let original: GstAudioClockGetTimeFunc
    /// The sink the original function reads from. A raw address: never dereferenced here, only handed back to
    /// `original` on the threads that call the clock, as the clock itself would have (the sink outlives its clock).
    private nonisolated(unsafe) let originalData: gpointer?
    private nonisolated(unsafe) let originalDestroy: GDestroyNotify?
    private let state: Mutex<AudioClockReadingPolicy>
    /// Who hears of the first absurd reading, and the reading fault a test injects (see `onFirstAbsurdReading`,
    /// `injectReadingOffset`). Apart from `state` so that the handler is called with no lock held.
    private let hooks = Mutex(Hooks())

    private struct Hooks {
        var onFirstAbsurdReading: (@Sendable () -> Void)?
        var reported = false
        var readingOffset: UInt64 = 0
    }

    private init(original: GstAudioClockGetTimeFunc, data: gpointer?, destroy: GDestroyNotify?, window: Duration) {
        self.original = original
        self.originalData = data
        self.originalDestroy = destroy
        self.state = Mutex(AudioClockReadingPolicy(window: ClockTime(window).nanoseconds))
    }

    /// Readings answered by extrapolation, and windows opened, so far.
    public var statistics: (extrapolated: Int, windows: Int) { state.withLock { ($0.extrapolated, $0.windows) } }
    /// Sink readings refused as absurd jumps so far.
    public var refusedReadings: Int { state.withLock { $0.refused } }
    /// Starts whose stream time had run while the sink was stopped (refused: `AudioClockReadingPolicy` rule 4), and
    /// the last such excess.
    public var stoppedTimeRefusals: (count: Int, lastExcess: Duration) {
        state.withLock { ($0.stoppedTimeRefused, .nanoseconds(Int64($0.lastStoppedExcess))) }
    }
    /// The last start's calibration reading and the stopped time rule 4 judged it against (nil: none noted).
    public var lastOpening: (reading: Duration, stopped: Duration?)? {
        state.withLock { policy in
            policy.lastOpening.map { (.nanoseconds(Int64($0.reading)), $0.stopped.map { .nanoseconds(Int64($0)) }) }
        }
    }
    /// The sink's stream is known lost: the guard no longer asks the sink, nor lets it start.
    public var isLost: Bool { state.withLock { $0.isLost } }

    /// Calls `handler` once, on the thread that read the clock (a streaming thread: hop away, take no GStreamer
    /// lock), when the sink first gives a reading rule 3 refuses: libpulse has wrapped the stream's time, which then
    /// sticks for the stream's life. The guard hides the wrap from the clock, but not from libpulse: such a stream's
    /// writes blocked for 1.1, 2.2, then 4.2 s after each later pause and resume (issue 15: 5 of 6 runs of four
    /// views with a seek and a pause every 5.5 s), freezing its view's video; a new stream does not (3 of 3 runs).
    public func onFirstAbsurdReading(_ handler: @escaping @Sendable () -> Void) {
        hooks.withLock { $0.onFirstAbsurdReading = handler }
    }

    /// Fault injection for tests and the soak: from now on every sink reading is reported `offset` later than the
    /// sink answered (the jump libpulse's wrap makes is hundreds of years). The stream itself is not touched.
    public func injectReadingOffset(_ offset: Duration) {
        hooks.withLock { $0.readingOffset = ClockTime(offset).nanoseconds }
    }

    /// The next start of the sink's device happens no earlier than `delay` from now: the first clock reading from
    /// then on opens a window. Asks the sink once first (see the type's comment): call it where no GStreamer lock
    /// is held, before the start.
    public func arm(after delay: Duration = .zero) {
        if !isLost, let clock = providedClock {
            // Only for its side effect: a dead stream posts its error now, here, and the bus marks us lost.
            _ = original(clock, originalData)
        }
        let at = Self.now() + ClockTime(max(.zero, delay)).nanoseconds
        state.withLock { $0.arm(at: at) }
    }

    /// The sink's device has just stopped (its pipeline reached PAUSED: pulsesink corked the stream): notes the
    /// stream's time now, which the next start cannot find further on (`AudioClockReadingPolicy` rule 4). Asks the
    /// sink once: call it where no GStreamer lock is held, as `arm`.
    public func noteStopped() {
        guard !isLost, let clock = providedClock else { return }
        let reading = original(clock, originalData)
        guard reading != ClockTime.noneRawValue else { return }
        // An injected fault is seen by every reader, as libpulse's own would be.
        let offset = hooks.withLock { $0.readingOffset }
        let now = Self.now()
        state.withLock { $0.stopped(reading: UInt64(reading) &+ offset, now: now) }
    }

    /// The sink's stream is gone (its error was posted, or its player says so): from now on no reading asks the
    /// sink and the sink's ring buffer may not start.
    public func markLost() { state.withLock { $0.markLost() } }

    /// The sink as audiobasesink; it outlives its clock (see `originalData`).
    private var audioSink: UnsafeMutablePointer<GstAudioBaseSink>? {
        originalData.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstAudioBaseSink.self) }
    }

    /// The sink's own clock, whose function we replaced.
    private var providedClock: UnsafeMutablePointer<GstClock>? {
        audioSink?.pointee.provided_clock
    }

    /// Keeps audiobasesink's coming ring buffer start from reaching pulsesink (an atomic flag: safe with the sink's
    /// object lock held by the caller).
    private func forbidStart() {
        if let ringbuffer = audioSink?.pointee.ringbuffer { gst_audio_ring_buffer_may_start(ringbuffer, 0) }
    }

    fileprivate func time(_ clock: UnsafeMutablePointer<GstClock>?) -> GstClockTime {
        let now = Self.now()
        // `now` is taken before the lock: another thread may have opened the window after it.
        switch state.withLock({ $0.beforeAsking(now: now) }) {
        case .answer(let time): return GstClockTime(time)
        case .lost:
            forbidStart()
            return ClockTime.noneRawValue
        case .askSink: break
        }
        let reading = original(clock, originalData)
        let offset = hooks.withLock { $0.readingOffset }
        let sinkReading: UInt64? = reading == ClockTime.noneRawValue ? nil : UInt64(reading) &+ offset
        let (answer, refused) = state.withLock { policy in
            let before = policy.refused
            return (policy.afterAsking(reading: sinkReading, now: now), policy.refused > before)
        }
        if refused { reportAbsurdReading() }
        return answer.map(GstClockTime.init) ?? ClockTime.noneRawValue
    }

    private func reportAbsurdReading() {
        let handler: (@Sendable () -> Void)? = hooks.withLock { hooks in
            guard !hooks.reported, let handler = hooks.onFirstAbsurdReading else { return nil }
            hooks.reported = true
            return handler
        }
        handler?()
    }

    fileprivate func releaseOriginal() {
        if let originalDestroy, let originalData { originalDestroy(originalData) }
    }

    /// Monotonic ns (CLOCK_MONOTONIC, as GStreamer's system clock).
    private static func now() -> UInt64 { UInt64(gst_util_get_timestamp()) }

    private static let trampoline: GstAudioClockGetTimeFunc = { clock, userData in
        guard let userData else { return ClockTime.noneRawValue }
        return Unmanaged<AudioClockGuard>.fromOpaque(userData).takeUnretainedValue().time(clock)
    }

    private static let destroy: GDestroyNotify = { userData in
        guard let userData else { return }
        let guardian = Unmanaged<AudioClockGuard>.fromOpaque(userData)
        guardian.takeUnretainedValue().releaseOriginal()
        guardian.release()
    }

    /// Installs a guard on `element`'s own audio clock (an audio base sink's `provided_clock`), or returns the one
    /// already there. Call it on a sink no thread reads yet (just created, not in a running pipeline).
    /// Throws when the element is not an audio base sink or has no clock of its own.
    static func install(on element: Element, window: Duration) throws -> AudioClockGuard {
        let clock = try audioClock(of: element)
        if let existing = guardian(of: clock) { return existing }
        guard let original = clock.pointee.func else { throw GStreamerError.notAnAudioSink(element.name) }
        let guardian = AudioClockGuard(original: original, data: clock.pointee.user_data,
                                       destroy: clock.pointee.destroy_notify, window: window)
        // The clock owns the guard from here (released with the clock, through `destroy`), and the guard owns
        // what the clock owned (the original data and its destroy function).
        clock.pointee.user_data = Unmanaged.passRetained(guardian).toOpaque()
        clock.pointee.destroy_notify = destroy
        clock.pointee.func = trampoline
        return guardian
    }

    /// The guard installed on `element`'s audio clock, if any.
    static func installed(on element: Element) -> AudioClockGuard? {
        (try? audioClock(of: element)).flatMap(guardian(of:))
    }

    /// An error message was posted by `source`: when it is a guarded sink, its stream is lost. Called by the bus's
    /// sync handler on the posting thread (so a dead stream found by `arm`'s reading is marked before `arm`
    /// returns).
    static func noteError(postedBy source: UnsafeMutablePointer<GstObject>?) {
        guard let source, let sink = audioBaseSink(source) else { return }
        guard let provided = sink.pointee.provided_clock,
              g_type_check_instance_is_a(UnsafeMutableRawPointer(provided).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_audio_clock_get_type()) != 0 else { return }
        guardian(of: UnsafeMutableRawPointer(provided).assumingMemoryBound(to: GstAudioClock.self))?.markLost()
    }

    /// The guard behind `clock`'s function, nil when the function is not ours.
    private static func guardian(of clock: UnsafeMutablePointer<GstAudioClock>) -> AudioClockGuard? {
        guard let current = clock.pointee.func, let data = clock.pointee.user_data,
              unsafeBitCast(current, to: UnsafeRawPointer.self) == unsafeBitCast(trampoline, to: UnsafeRawPointer.self)
        else { return nil }
        return Unmanaged<AudioClockGuard>.fromOpaque(data).takeUnretainedValue()
    }

    private static func audioClock(of element: Element) throws -> UnsafeMutablePointer<GstAudioClock> {
        guard let sink = audioBaseSink(element.gobject) else { throw GStreamerError.notAnAudioSink(element.name) }
        guard let provided = sink.pointee.provided_clock,
              g_type_check_instance_is_a(UnsafeMutableRawPointer(provided).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_audio_clock_get_type()) != 0 else {
            throw GStreamerError.notAnAudioSink(element.name)
        }
        return UnsafeMutableRawPointer(provided).assumingMemoryBound(to: GstAudioClock.self)
    }
}

extension Element {
    /// Guards this audio sink's own clock against readings right after its device starts (see
    /// `AudioClockGuard`); returns the guard (the same one on a second call). Only on a sink no thread reads yet.
    public func guardAudioClock(window: Duration = .milliseconds(100)) throws -> AudioClockGuard {
        try AudioClockGuard.install(on: self, window: window)
    }

    /// The guard on this audio sink's clock, nil when none was installed.
    public var audioClockGuard: AudioClockGuard? { AudioClockGuard.installed(on: self) }
}
