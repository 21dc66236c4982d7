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

    /// Parses a stdin line: `p`, `play`, `pause`, `+10`, `-10`, `seek 42.5`, `rate 2`, `s`, `q`.
    /// Returns nil for anything else (the caller prints help).
    public static func parse(_ line: String) -> StageCommand? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first?.lowercased() else { return nil }
        switch (first, words.count) {
        case ("p", 1), ("space", 1), ("toggle", 1): return .togglePause
        case ("play", 1): return .play
        case ("pause", 1): return .pause
        case ("q", 1), ("quit", 1), ("exit", 1): return .quit
        case ("s", 1), ("status", 1): return .status
        case ("seek", 2):
            let arg = words[1]
            guard let value = Double(arg), value.isFinite else { return nil }
            if arg.hasPrefix("+") || arg.hasPrefix("-") { return .seekBy(value) }
            return value >= 0 ? .seekTo(value) : nil
        case ("r", 2):
            guard let n = Int(words[1]), n >= 1 else { return nil }
            return .whatHappened(n)
        case ("add", 2):
            return .add(words[1])
        case ("priority", 3):
            guard let n = Int(words[1]), n >= 1 else { return nil }
            return .priority(view: n, level: words[2].lowercased())
        case ("audio", 2), ("external", 2):
            let number: Int?
            if ["none", "0", "-"].contains(words[1].lowercased()) { number = nil } else {
                guard let n = Int(words[1]), n >= 1 else { return nil }
                number = n
            }
            return first == "audio" ? .preferAudio(number) : .preferExternal(number)
        case ("lang", 4) where words[2].lowercased() == "audio":
            guard let n = Int(words[1]), n >= 1 else { return nil }
            return .audioLanguage(view: n, language: words[3])
        case ("subs", 3):
            guard let n = Int(words[1]), n >= 1 else { return nil }
            return .subtitles(view: n, language: words[2].lowercased() == "off" ? nil : words[2])
        case ("ff", 2), ("rew", 2):
            guard let n = Int(words[1]), n >= 1 else { return nil }
            return .trickPlay(view: n, rate: first == "ff" ? 8 : -8)
        case ("preview", 4):
            guard let n = Int(words[1]), n >= 1, let t = Double(words[2]), t >= 0, t.isFinite else { return nil }
            return .preview(view: n, seconds: t, path: words[3])
        case ("rate", 2):
            guard let value = Double(words[1]), value > 0, value.isFinite else { return nil }
            return .rate(value)
        default:
            if words.count == 1, first.hasPrefix("+") || first.hasPrefix("-"), let value = Double(first), value.isFinite {
                return .seekBy(value)
            }
            return nil
        }
    }

    public static let help = "commands: p (play/pause all), +10 / -10 (seek by seconds), seek 42.5, rate 2, s (status), q (quit); lang N audio fr, subs N en|off; coordinated: r N (what happened? on view N), add URI; HLS: priority N low|default|high; routing: audio N, external N (none clears); HLS I-frames: ff N, rew N (8x/-8x; any transport command resumes), preview N SECONDS PATH.png"
}
