import Foundation

/// A transport command for every view on the stage, from the window's keyboard or from stdin.
public enum StageCommand: Sendable, Equatable {
    case togglePause
    case play
    case pause
    /// Relative seek in seconds (negative = back).
    case seekBy(Double)
    /// Absolute seek in seconds.
    case seekTo(Double)
    case rate(Double)
    case status
    case quit
    /// "What happened?" on view N (coordinated): replay the last seconds at 2x and rejoin.
    case whatHappened(Int)
    /// Add a view (coordinated: it joins the group in sync).
    case add(String)
    /// networkResourcePriority of view N: "low", "default", "high" or "next" (cycles; the window's number keys).
    /// Handled by the stage's observer (the priority manager).
    case priority(view: Int, level: String)
    /// `audio N` (window: `a N`): view N is preferred for non-mixable audio routes; nil (`audio none`) clears it.
    case preferAudio(Int?)
    /// `external N` (window: `v N`): view N is preferred for the external display; nil clears it.
    case preferExternal(Int?)
    /// `lang N audio fr`: view N plays its audio track in that language.
    case audioLanguage(view: Int, language: String)
    /// `subs N en` / `subs N off`: view N shows subtitles in that language, or none.
    case subtitles(view: Int, language: String?)
    /// `ff N` / `rew N`: I-frame trick play on view N at 8× / −8× (HLS with an I-frame playlist). Any transport
    /// command ends it, the view resuming at 1× where it stopped. Handled by the stage's `trickPlay` layer.
    case trickPlay(view: Int, rate: Double)
    /// `preview N SECONDS PATH.png`: a scrub preview of view N (its I-frame at or before SECONDS) written to PATH.
    case preview(view: Int, seconds: Double, path: String)
    /// `help` / `?` / `h` (also the window's `?` and `h` keys): the table of keys and commands (`StageHelp`).
    case help
    /// `volume N 50` (view N) / `volume 80` (every view): the volume in percent of the media's level
    /// (`StageLimits.volumes`), through playbin3's own volume.
    case setVolume(view: Int?, percent: Double)
    /// `volume +10` / `volume -10`, the window's `/` and `*` keys: every view's volume changed by that many points.
    case changeVolume(by: Double)
    /// `mute N` / `mute` (the window's `m` key): toggles view N's mute, or every view's (all muted unless all were).
    case toggleMute(view: Int?)

    /// Parses a stdin line: `p`, `play`, `pause`, `+10`, `-10`, `seek 42.5`, `rate 2`, `s`, `q`, ….
    /// Returns nil for anything that is no valid command (`read` says why).
    public static func parse(_ line: String) -> StageCommand? {
        try? read(line).get()
    }

    /// Parses a stdin line; a bad number or an unknown command is a `StageInputError` whose description is the one
    /// line to print (the input, what is wrong, the allowed range). View numbers are checked against the views by
    /// the stage, which knows how many there are.
    public static func read(_ line: String) -> Result<StageCommand, StageInputError> {
        Result { () throws(StageInputError) -> StageCommand in try readCommand(line) }
    }

    private static func readCommand(_ line: String) throws(StageInputError) -> StageCommand {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first?.lowercased() else { throw .unknownCommand(trimmed) }
        /// A view number: 1 or more here (the stage checks it against its views).
        func view(_ word: String) throws(StageInputError) -> Int {
            guard let n = Int(word) else { throw .malformed(input: trimmed, expected: "a view number (1, 2, …)") }
            guard n >= 1 else { throw .outOfRange(input: trimmed, allowed: "view numbers from 1") }
            return n
        }
        func number(_ word: String) throws(StageInputError) -> Double {
            guard let value = Double(word) else { throw .malformed(input: trimmed, expected: "a number") }
            return value
        }
        switch (first, words.count) {
        case ("p", 1), ("space", 1), ("toggle", 1): return .togglePause
        case ("play", 1): return .play
        case ("pause", 1): return .pause
        case ("q", 1), ("quit", 1), ("exit", 1): return .quit
        case ("s", 1), ("status", 1): return .status
        case ("seek", 2):
            return try StageLimits.seek(words[1], input: trimmed)
        case ("help", 1), ("?", 1), ("h", 1):
            return .help
        case ("volume", 2), ("vol", 2):
            let arg = words[1]
            if arg.hasPrefix("+") || arg.hasPrefix("-") {
                return .changeVolume(by: try StageLimits.volumeStep(try number(arg), input: trimmed))
            }
            return .setVolume(view: nil, percent: try StageLimits.volume(try number(arg), input: trimmed))
        case ("volume", 3), ("vol", 3):
            return .setVolume(view: try view(words[1]), percent: try StageLimits.volume(try number(words[2]), input: trimmed))
        case ("mute", 1), ("m", 1):
            return .toggleMute(view: nil)
        case ("mute", 2), ("m", 2):
            return .toggleMute(view: try view(words[1]))
        case ("r", 2):
            return .whatHappened(try view(words[1]))
        case ("add", 2):
            return .add(words[1])
        case ("priority", 3):
            return .priority(view: try view(words[1]), level: words[2].lowercased())
        case ("audio", 2), ("external", 2):
            let number: Int? = ["none", "0", "-"].contains(words[1].lowercased()) ? nil : try view(words[1])
            return first == "audio" ? .preferAudio(number) : .preferExternal(number)
        case ("lang", 4) where words[2].lowercased() == "audio":
            return .audioLanguage(view: try view(words[1]), language: try StageLimits.language(words[3], input: trimmed))
        case ("subs", 3):
            let language = words[2].lowercased() == "off" ? nil : try StageLimits.language(words[2], input: trimmed)
            return .subtitles(view: try view(words[1]), language: language)
        case ("ff", 2), ("rew", 2):
            return .trickPlay(view: try view(words[1]), rate: first == "ff" ? 8 : -8)
        case ("preview", 4):
            let seconds = try StageLimits.mediaTime(try number(words[2]), input: trimmed)
            return .preview(view: try view(words[1]), seconds: seconds, path: words[3])
        case ("rate", 2):
            return .rate(try StageLimits.rate(try number(words[1]), input: trimmed))
        default:
            if words.count == 1, first.hasPrefix("+") || first.hasPrefix("-") {
                return try StageLimits.seek(first, input: trimmed)
            }
            throw .unknownCommand(trimmed)
        }
    }

    /// The command as typed on stdin ("seek 42.5", "r 3"): what error lines quote.
    public var typed: String {
        func seconds(_ value: Double) -> String { StageLimits.format(value) }
        switch self {
        case .togglePause: return "p"
        case .play: return "play"
        case .pause: return "pause"
        case .seekBy(let s): return s < 0 ? seconds(s) : "+" + seconds(s)
        case .seekTo(let s): return "seek \(seconds(s))"
        case .rate(let r): return "rate \(seconds(r))"
        case .status: return "s"
        case .quit: return "q"
        case .whatHappened(let n): return "r \(n)"
        case .add(let uri): return "add \(uri)"
        case .priority(let n, let level): return "priority \(n) \(level)"
        case .preferAudio(let n): return "audio \(n.map(String.init) ?? "none")"
        case .preferExternal(let n): return "external \(n.map(String.init) ?? "none")"
        case .audioLanguage(let n, let language): return "lang \(n) audio \(language)"
        case .subtitles(let n, let language): return "subs \(n) \(language ?? "off")"
        case .trickPlay(let n, let rate): return "\(rate > 0 ? "ff" : "rew") \(n)"
        case .preview(let n, let s, let path): return "preview \(n) \(seconds(s)) \(path)"
        case .help: return "help"
        case .setVolume(let n, let percent): return "volume \(n.map { "\($0) " } ?? "")\(seconds(percent))"
        case .changeVolume(let step): return "volume \(step < 0 ? "" : "+")\(seconds(step))"
        case .toggleMute(let n): return "mute\(n.map { " \($0)" } ?? "")"
        }
    }

    /// `audio N` / `external N`.
    public var isRoutePreference: Bool {
        switch self {
        case .preferAudio, .preferExternal: return true
        default: return false
        }
    }

    /// The view the command names, if any.
    public var view: Int? {
        switch self {
        case .whatHappened(let n), .priority(let n, _), .audioLanguage(let n, _), .subtitles(let n, _),
             .trickPlay(let n, _), .preview(let n, _, _):
            return n
        case .setVolume(let n, _), .toggleMute(let n):
            return n
        case .preferAudio(let n), .preferExternal(let n):
            return n
        default:
            return nil
        }
    }

    /// `text` with control characters shown in caret notation (ESC as `^[`, DEL as `^?`): a line typed with arrow
    /// keys or ^C quoted back in an error must not move the cursor or change the terminal.
    public static func printable(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0..<0x20: shown += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7f: shown += "^?"
            case 0x80..<0xa0: shown += String(format: "\\u{%X}", scalar.value)
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// The commands in one line, for `play --help`; the table `help` prints is `StageHelp.text`.
    public static let summary = "p (play/pause all), +10 / -10, seek 1:23 / seek 42.5 / seek -5, rate 2, volume [N] 50, mute [N], s (status), q (quit), help (every command)"
}
