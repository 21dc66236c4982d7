import Foundation

/// The ranges every number a user gives the stage or the CLI must fall in, and the checks that say so in one line.
/// Pure: no pipeline, no clock (`StageLimitsTests` runs in milliseconds).
public enum StageLimits {
    /// Playback rates, 1/8× … 8×. playbin3 decodes every frame at any rate, so r× costs r times the decoding of
    /// 1× (one 1080p view takes 0.16–0.27 of a core here): well before 8× a few views use up a 2-core machine, and
    /// far above it the decoders and sinks cannot keep up at all (`rate 100` froze both views: issue 15 row 11).
    /// Faster is I-frame trick play (`ff N`). Below 1/8× a second of media lasts over 8 s and audio is noise.
    public static let rates: ClosedRange<Double> = 0.125...8
    /// Wall-clock spans (`--duration`) and relative seeks, in seconds: up to 7 days — longer than any event, and
    /// far inside what the time types hold (`Duration` in milliseconds, `ClockTime` in 64-bit nanoseconds).
    public static let maxSeconds: Double = 604_800
    /// Tile sizes in the window, pixels: at least 16 (smaller is invisible), at most 8K per tile (X11 windows stop
    /// at 32767 and a grid holds several tiles).
    public static let tileWidths: ClosedRange<Int> = 16...7680
    public static let tileHeights: ClosedRange<Int> = 16...4320
    /// Empty tiles kept for `add URI`.
    public static let spareTiles: ClosedRange<Int> = 0...16

    /// `rate R`: finite and within `rates`.
    public static func rate(_ value: Double, input: String) throws(StageInputError) -> Double {
        guard value.isFinite else { throw .notFinite(input: input, allowed: ratesText) }
        guard rates.contains(value) else { throw .outOfRange(input: input, allowed: ratesText) }
        return value
    }

    /// `--duration S`: finite, above 0, at most `maxSeconds`.
    public static func duration(_ value: Double, input: String) throws(StageInputError) -> Double {
        let allowed = "more than 0 and at most \(format(maxSeconds)) s"
        guard value.isFinite else { throw .notFinite(input: input, allowed: allowed) }
        guard value > 0, value <= maxSeconds else { throw .outOfRange(input: input, allowed: allowed) }
        return value
    }

    /// `+S` / `-S` / `seek ±S`: finite, at most `maxSeconds` either way (the player keeps the target in the media).
    public static func relativeSeek(_ value: Double, input: String) throws(StageInputError) -> Double {
        let allowed = "-\(format(maxSeconds))…+\(format(maxSeconds)) s"
        guard value.isFinite else { throw .notFinite(input: input, allowed: allowed) }
        guard abs(value) <= maxSeconds else { throw .outOfRange(input: input, allowed: allowed) }
        return value
    }

    /// `seek S`, `preview N S …`: a media time, finite, 0 … `maxSeconds` (the stage checks it against the media's
    /// end with `seekTarget(_:end:)` once it knows it).
    public static func mediaTime(_ value: Double, input: String) throws(StageInputError) -> Double {
        let allowed = "0…\(format(maxSeconds)) s"
        guard value.isFinite else { throw .notFinite(input: input, allowed: allowed) }
        guard value >= 0, value <= maxSeconds else { throw .outOfRange(input: input, allowed: allowed) }
        return value
    }

    /// `seek 1:23` / `seek 1:02:03` / `seek 42.5` (absolute), `seek +5` / `seek -1:30` / `+10` (relative: a sign
    /// makes it relative, as in mpv).
    public static func seek(_ word: String, input: String) throws(StageInputError) -> StageCommand {
        let sign: Double? = word.hasPrefix("+") ? 1 : word.hasPrefix("-") ? -1 : nil
        let magnitude = sign == nil ? Substring(word) : word.dropFirst()
        guard let seconds = clockTime(magnitude) else {
            throw .malformed(input: input, expected: "a time: 42.5, 1:23 or 1:02:03 (absolute), +5 or -1:30 (relative)")
        }
        if let sign { return .seekBy(try relativeSeek(sign * seconds, input: input)) }
        return .seekTo(try mediaTime(seconds, input: input))
    }

    /// "42.5" → 42.5, "1:23" → 83, "1:02:03.5" → 3723.5; nil for anything else (minutes and seconds after the first
    /// part are 0…59, as on a clock; the first part may be any size: "90:00").
    static func clockTime(_ text: Substring) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.first != "+" && $0.first != "-" })
        else { return nil }
        guard let last = Double(parts[parts.count - 1]), last.isFinite || parts.count == 1 else { return nil }
        if parts.count == 1 { return last }
        guard last < 60 else { return nil }
        var total = last
        var unit = 60.0
        for (index, part) in parts.dropLast().reversed().enumerated() {
            guard let value = Int(part), value >= 0 else { return nil }
            // Every part but the first is on a clock face.
            if index < parts.count - 2, value >= 60 { return nil }
            total += Double(value) * unit
            unit *= 60
        }
        return total
    }

    /// Volumes in percent of the media's own level: 0 (silent) … 150 (a 1.5× gain; above it speech clips).
    public static let volumes: ClosedRange<Double> = 0...150

    /// `volume [N] P`: finite and within `volumes`.
    public static func volume(_ value: Double, input: String) throws(StageInputError) -> Double {
        let allowed = "\(format(volumes.lowerBound))…\(format(volumes.upperBound)) (percent)"
        guard value.isFinite else { throw .notFinite(input: input, allowed: allowed) }
        guard volumes.contains(value) else { throw .outOfRange(input: input, allowed: allowed) }
        return value
    }

    /// `volume +P` / `volume -P`: a step of at most the whole range either way.
    public static func volumeStep(_ value: Double, input: String) throws(StageInputError) -> Double {
        let span = volumes.upperBound - volumes.lowerBound
        let allowed = "-\(format(span))…+\(format(span)) (percent points)"
        guard value.isFinite else { throw .notFinite(input: input, allowed: allowed) }
        guard abs(value) <= span else { throw .outOfRange(input: input, allowed: allowed) }
        return value
    }

    /// `--audio-lang fr`, `subs N en`, `lang N audio deu`: an ISO 639 code (2 or 3 letters) that names a language
    /// (`zz` does not), as Foundation's locale data knows them; `und` (undetermined) is refused too, as no choice.
    public static func language(_ code: String, input: String) throws(StageInputError) -> String {
        let known = code.count >= 2 && code.count <= 3 && code.allSatisfy { $0.isASCII && $0.isLetter }
            && code.lowercased() != "und"
            && Locale(identifier: "en").localizedString(forLanguageCode: code.lowercased()) != nil
        guard known else { throw .malformed(input: input, expected: "a language code (ISO 639), e.g. en, fr, deu") }
        return code
    }

    /// An absolute seek against the end of the media (the shortest of the views, so that no view is sent past
    /// its own end, coordinated or not); nil end: unknown (live), any target goes.
    public static func seekTarget(_ value: Double, end: Double?, input: String) throws(StageInputError) -> Double {
        guard let end else { return value }
        guard value <= end else { throw .pastTheEnd(input: input, end: end) }
        return value
    }

    /// A view number in a command: 1 … the number of views.
    public static func view(_ number: Int, count: Int, input: String) throws(StageInputError) -> Int {
        guard number >= 1, number <= count else { throw .noSuchView(input: input, view: number, count: count) }
        return number
    }

    /// `--tile WxH`: both sides within `tileWidths` / `tileHeights`.
    public static func tile(_ text: String) throws(StageInputError) -> (width: Int, height: Int) {
        let allowed = "WIDTHxHEIGHT with width \(tileWidths.lowerBound)…\(tileWidths.upperBound) and height \(tileHeights.lowerBound)…\(tileHeights.upperBound)"
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            throw .malformed(input: text, expected: allowed)
        }
        guard tileWidths.contains(width), tileHeights.contains(height) else {
            throw .outOfRange(input: text, allowed: allowed)
        }
        return (width, height)
    }

    /// `--spare-tiles N`: within `spareTiles`.
    public static func spareTileCount(_ value: Int, input: String) throws(StageInputError) -> Int {
        guard spareTiles.contains(value) else {
            throw .outOfRange(input: input, allowed: "\(spareTiles.lowerBound)…\(spareTiles.upperBound)")
        }
        return value
    }

    static let ratesText = "\(format(rates.lowerBound))…\(format(rates.upperBound)) (1/8× to 8×; faster: ff N on HLS views)"

    /// "0.125", "8", "604800": numbers as people type them.
    public static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A number or view a user gave that the stage cannot take. Its description is the one line printed: the input as
/// typed, what is wrong, and what is allowed.
public enum StageInputError: Error, Equatable, CustomStringConvertible {
    /// NaN or infinite (`nan`, `inf`, `1e309`).
    case notFinite(input: String, allowed: String)
    /// A number outside its range.
    case outOfRange(input: String, allowed: String)
    /// Not the shape expected (`--tile 480by270`).
    case malformed(input: String, expected: String)
    /// A view number no view has.
    case noSuchView(input: String, view: Int, count: Int)
    /// An absolute seek past the end of the media (seconds).
    case pastTheEnd(input: String, end: Double)
    /// A line that is no command.
    case unknownCommand(String)

    public var description: String {
        switch self {
        case .notFinite(let input, let allowed):
            return "\(input): not a finite number; allowed: \(allowed)"
        case .outOfRange(let input, let allowed):
            return "\(input): out of range; allowed: \(allowed)"
        case .malformed(let input, let expected):
            return "\(input): expected \(expected)"
        case .noSuchView(let input, let view, let count):
            return "\(input): no view \(view); views are 1…\(count)"
        case .pastTheEnd(let input, let end):
            return "\(input): past the end of the media; allowed: 0…\(String(format: "%.1f", end)) s (nothing moved)"
        case .unknownCommand(let line):
            return "unknown command '\(line)'; type help for the commands"
        }
    }
}
