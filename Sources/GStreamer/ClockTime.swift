import CGStreamer
import Foundation

/// A GStreamer time in nanoseconds. GStreamer's "none" (`GST_CLOCK_TIME_NONE`, all bits set) never becomes a
/// `ClockTime`: APIs return `ClockTime?` and `nil` stands for none.
public struct ClockTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var nanoseconds: UInt64

    /// The raw value GStreamer uses for "no time" (`GST_CLOCK_TIME_NONE` does not import into Swift).
    public static let noneRawValue: UInt = UInt.max

    public init(nanoseconds: UInt64) {
        precondition(nanoseconds != UInt64(ClockTime.noneRawValue), "use nil for GST_CLOCK_TIME_NONE")
        self.nanoseconds = nanoseconds
    }

    /// Wraps a raw GStreamer time; nil for `GST_CLOCK_TIME_NONE`.
    public init?(raw: UInt) {
        guard raw != ClockTime.noneRawValue else { return nil }
        self.nanoseconds = UInt64(raw)
    }

    public static func seconds(_ s: Double) -> ClockTime {
        ClockTime(nanoseconds: UInt64(max(0, (s * 1e9).rounded())))
    }
    public static func milliseconds(_ ms: Double) -> ClockTime { .seconds(ms / 1000) }
    /// A Swift `Duration` (non-negative) as a clock time.
    public init(_ duration: Duration) { self = .seconds(duration.inSeconds) }
    public static let zero = ClockTime(nanoseconds: 0)

    public var seconds: Double { Double(nanoseconds) / 1e9 }
    public var milliseconds: Double { Double(nanoseconds) / 1e6 }

    public static func < (a: ClockTime, b: ClockTime) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: ClockTime, b: ClockTime) -> ClockTime { ClockTime(nanoseconds: a.nanoseconds + b.nanoseconds) }
    /// Saturating difference (never negative).
    public static func - (a: ClockTime, b: ClockTime) -> ClockTime {
        ClockTime(nanoseconds: a.nanoseconds > b.nanoseconds ? a.nanoseconds - b.nanoseconds : 0)
    }

    /// "0:01:02.345"
    public var description: String {
        let totalMs = nanoseconds / 1_000_000
        let h = totalMs / 3_600_000, m = (totalMs / 60_000) % 60, s = (totalMs / 1000) % 60, ms = totalMs % 1000
        return "\(h):" + String(format: "%02d:%02d.%03d", m, s, ms)
    }
}

extension Optional where Wrapped == ClockTime {
    /// The raw GStreamer value: `GST_CLOCK_TIME_NONE` for nil.
    public var rawClockTime: UInt { self.map { UInt($0.nanoseconds) } ?? ClockTime.noneRawValue }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
