/// The render-time log `multiview play --sync-log DIR` writes while it plays (`DIR/render-times.log`): the same
/// per-frame records as `sync-report`'s recorder, streamed as text so that a long run (the soak: 30 min, 8 video
/// views, 30 fps) neither holds them in memory nor loses them when it ends.
///
/// One record per line, fields separated by one space:
/// - `# multiview sync-log 1` — the first line (format and version).
/// - `T CLOCK_NS UNIX_NS` — the shared clock and the wall clock read back to back (written at every flush): maps
///   a script's wall-clock windows onto render times.
/// - `V VIEW ITEM` — the item view VIEW's following frames belong to (views on different items are never compared);
///   written when a view's item first appears or changes. ITEM is the rest of the line.
/// - `F VIEW RENDER_NS MEDIA_NS RATE` — one frame: render time on the shared clock, media (stream) time, playback rate.
public struct SyncLog: Sendable, Equatable {
    public static let header = "# multiview sync-log 1"
    public static let fileName = "render-times.log"

    /// A reading of the shared clock and the wall clock taken together.
    public struct ClockPair: Sendable, Equatable {
        public var clockNs: UInt64
        public var unixNs: UInt64
        public init(clockNs: UInt64, unixNs: UInt64) { self.clockNs = clockNs; self.unixNs = unixNs }
    }

    /// The frames in file order (`phase` 0: the log knows no script phases).
    public var frames: [FrameRecord]
    /// In file order.
    public var clockPairs: [ClockPair]

    public init(frames: [FrameRecord] = [], clockPairs: [ClockPair] = []) {
        self.frames = frames; self.clockPairs = clockPairs
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case missingHeader(found: String)
        case malformedLine(number: Int, text: String)

        public var description: String {
            switch self {
            case .missingHeader(let found): return "not a sync log (first line '\(found.prefix(60))', expected '\(SyncLog.header)')"
            case .malformedLine(let number, let text): return "line \(number): malformed record '\(text.prefix(80))'"
            }
        }
    }

    /// Reads a whole log. A last line without its newline (the writer was killed mid-write) is ignored; any other
    /// line that is not a record is an error naming it.
    public static func parse(_ text: Substring) throws(ParseError) -> SyncLog {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, first == header else { throw .missingHeader(found: String(lines.first ?? "")) }
        if text.last != "\n" { lines.removeLast() }   // cut short, or the empty piece after the final newline
        else if lines.last == "" { lines.removeLast() }
        var log = SyncLog()
        var items: [Int: String] = [:]
        for (offset, line) in lines.enumerated().dropFirst() where !line.isEmpty {
            let fields = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
            switch (fields.first.map(String.init) ?? "", fields.count) {
            case ("F", 5):
                guard let view = Int(fields[1]), let render = UInt64(fields[2]), let media = UInt64(fields[3]),
                      let rate = Double(fields[4]) else { throw .malformedLine(number: offset + 1, text: String(line)) }
                log.frames.append(FrameRecord(view: view, mediaTimeNs: media, renderClockNs: render, rate: rate,
                                              phase: 0, item: items[view] ?? ""))
            case ("T", 3):
                guard let clock = UInt64(fields[1]), let unix = UInt64(fields[2]) else {
                    throw .malformedLine(number: offset + 1, text: String(line))
                }
                log.clockPairs.append(ClockPair(clockNs: clock, unixNs: unix))
            case ("V", 3...):
                guard let view = Int(fields[1]) else { throw .malformedLine(number: offset + 1, text: String(line)) }
                items[view] = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)[2]
                    .description
            default:
                throw .malformedLine(number: offset + 1, text: String(line))
            }
        }
        return log
    }

    /// The lines a writer appends for `frames` (after the header), given the item each view was last written
    /// with (updated): a `V` line before a view's first frame on a new item.
    public static func lines(for frames: [FrameRecord], lastItems: inout [Int: String]) -> String {
        var out = ""
        out.reserveCapacity(frames.count * 44)
        for frame in frames {
            if lastItems[frame.view] != frame.item {
                lastItems[frame.view] = frame.item
                out += "V \(frame.view) \(frame.item)\n"
            }
            out += "F \(frame.view) \(frame.renderClockNs) \(frame.mediaTimeNs) \(frame.rate)\n"
        }
        return out
    }

    public static func line(for pair: ClockPair) -> String { "T \(pair.clockNs) \(pair.unixNs)\n" }

    /// The shared-clock time of a wall-clock time, through the pair nearest to it (the two clocks may be slewed
    /// apart by NTP over a long run; the nearest reading keeps that error to the slew since then). nil without
    /// pairs, or when the time falls before the clock's zero.
    public func clockNs(atUnixNs unix: UInt64) -> UInt64? {
        guard let pair = clockPairs.min(by: { distance($0.unixNs, unix) < distance($1.unixNs, unix) }) else { return nil }
        let clock = Int64(pair.clockNs) + (Int64(unix) - Int64(pair.unixNs))
        return clock >= 0 ? UInt64(clock) : nil
    }

    private func distance(_ a: UInt64, _ b: UInt64) -> UInt64 { a > b ? a - b : b - a }
}
