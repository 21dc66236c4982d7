import CGStreamer

/// An owned `GstClock` (not final: `NetClientClock` and `PtpClock` are clocks too).
public class Clock: ObjectRef, @unchecked Sendable {
    public var clock: UnsafeMutablePointer<GstClock> {
        UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstClock.self)
    }

    /// The process-wide monotonic system clock (`gst_system_clock_obtain`).
    public static func systemClock() -> Clock {
        GStreamer.ensureInitialized()
        return Clock(takingOwnershipOf: gst_system_clock_obtain())
    }

    /// The clock's current time.
    public var time: ClockTime { ClockTime(raw: gst_clock_get_time(clock)) ?? .zero }

    public var isSystemClock: Bool {
        g_type_check_instance_is_a(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GTypeInstance.self),
                                   gst_system_clock_get_type()) != 0
    }

    public static func === (a: Clock, b: Clock) -> Bool { a.gobject == b.gobject }
}
