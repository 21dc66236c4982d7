import ArgumentParser
import GStreamer
import Multiview

/// `play` options choosing every view's audio and subtitle language (from its stream collection).
struct LanguageOptions: ParsableArguments {
    @Option(name: .long, help: "Audio language for every view that has it (e.g. fr); the others keep their default track.")
    var audioLang: String?

    @Option(name: .long, help: "Subtitle language for every view that has it (e.g. en), or 'off'.")
    var subtitles: String?

    /// A language option that names no language (`--audio-lang zz` was silently accepted): its one line.
    func problem() -> String? {
        do {
            if let audioLang { _ = try StageLimits.language(audioLang, input: "--audio-lang \(audioLang)") }
            if let subtitles, subtitles.lowercased() != "off" {
                _ = try StageLimits.language(subtitles, input: "--subtitles \(subtitles)")
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    var preferences: LanguagePreferences {
        let subs: LanguagePreferences.Subtitles
        switch subtitles?.lowercased() {
        case nil: subs = .automatic
        case "off"?: subs = .off
        default: subs = .language(subtitles!)
        }
        return LanguagePreferences(audio: audioLang, subtitles: subs)
    }

    /// "  audio languages: en (default), fr" and "  subtitles: en, off" for `multiview info`.
    static func optionLines(_ info: MediaInfo) -> [String] {
        let audio = info.streams.filter { $0.kind == .audio }
        let subs = info.streams.filter { $0.kind == .subtitle }
        var lines: [String] = []
        if audio.count > 1 || audio.contains(where: { $0.language != nil }) {
            let names = audio.enumerated().map { ($0.element.language ?? "und") + ($0.offset == 0 ? " (default)" : "") }
            lines.append("  audio languages: \(names.joined(separator: ", "))  (--audio-lang, stdin: lang N audio LANG)")
        }
        if !subs.isEmpty {
            let names = subs.map { $0.language ?? "und" } + ["off"]
            lines.append("  subtitles: \(names.joined(separator: ", "))  (--subtitles, stdin: subs N LANG|off)")
        }
        return lines
    }
}

extension Play {
    /// What happens to each view's player when the stage creates it: language preferences, then the remote
    /// control follows it.
    static func playerHook(languages: LanguagePreferences, remote: RemoteControlHandle?,
                           reporter: TerminalReporter) -> (@Sendable (Player) async -> Void)? {
        if languages == LanguagePreferences() && remote == nil { return nil }
        return { player in
            if languages != LanguagePreferences() {
                do { try await player.setLanguagePreferences(languages) } catch { reporter.note("\(error)") }
            }
            await remote?.add(player)
        }
    }
}
