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
    private let window: Duration

    private struct State {
        /// Monotonic ns (`gst_util_get_timestamp`) after which the next reading opens a window; nil when not armed.
        var armedAfter: UInt64?
        var windowStart: UInt64 = 0
        var windowEnd: UInt64 = 0
        var windowBase: GstClockTime = 0
        var extrapolated = 0
        var windows = 0
    }
    private let state = Mutex(State())

    private init(original: GstAudioClockGetTimeFunc, data: gpointer?, destroy: GDestroyNotify?, window: Duration) {
        self.original = original
        self.originalData = data
        self.originalDestroy = destroy
        self.window = window
    }

    /// Readings answered by extrapolation, and windows opened, so far.
    public var statistics: (extrapolated: Int, windows: Int) { state.withLock { ($0.extrapolated, $0.windows) } }

    /// The next start of the sink's device happens no earlier than `delay` from now: the first clock reading from
    /// then on opens a window.
    public func arm(after delay: Duration = .zero) {
        let at = Self.now() + ClockTime(max(.zero, delay)).nanoseconds
        state.withLock { $0.armedAfter = at }
    }

    fileprivate func time(_ clock: UnsafeMutablePointer<GstClock>?) -> GstClockTime {
        let now = Self.now()
        let answer = state.withLock { s -> GstClockTime? in
            // `now` was taken before the lock: another thread may have opened the window after it.
            guard now >= s.windowStart, now < s.windowEnd else { return nil }
            s.extrapolated += 1
            return s.windowBase &+ GstClockTime(now - s.windowStart)
        }
        if let answer { return answer }
        let reading = original(clock, originalData)
        guard reading != ClockTime.noneRawValue else { return reading }
        state.withLock { s in
            guard let after = s.armedAfter, now >= after else { return }
            s.armedAfter = nil
            s.windowStart = now
            s.windowEnd = now + ClockTime(window).nanoseconds
            s.windowBase = reading
            s.windows += 1
        }
        return reading
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

    /// The guard behind `clock`'s function, nil when the function is not ours.
    private static func guardian(of clock: UnsafeMutablePointer<GstAudioClock>) -> AudioClockGuard? {
        guard let current = clock.pointee.func, let data = clock.pointee.user_data,
              unsafeBitCast(current, to: UnsafeRawPointer.self) == unsafeBitCast(trampoline, to: UnsafeRawPointer.self)
        else { return nil }
        return Unmanaged<AudioClockGuard>.fromOpaque(data).takeUnretainedValue()
    }

    private static func audioClock(of element: Element) throws -> UnsafeMutablePointer<GstAudioClock> {
        let instance = UnsafeMutableRawPointer(element.gobject).assumingMemoryBound(to: GTypeInstance.self)
        guard g_type_check_instance_is_a(instance, gst_audio_base_sink_get_type()) != 0 else {
            throw GStreamerError.notAnAudioSink(element.name)
        }
        let sink = UnsafeMutableRawPointer(element.gobject).assumingMemoryBound(to: GstAudioBaseSink.self)
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
