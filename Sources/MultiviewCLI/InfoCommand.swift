import ArgumentParser
import Foundation
import GStreamer
import HLS
import Multiview

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe media: duration, container, and every stream's codec, resolution, frame rate, channels.")

    @Argument(help: "Media files or URIs.")
    var media: [String]

    func run() async throws {
        let reporter = TerminalReporter()
        var failed = false
        // Folders and plain playlists: their entries, as `play` would play them.
        let items: [String]
        do {
            let expanded = try PlaylistExpansion.expand(media)
            for note in expanded.notes { reporter.note(note) }
            items = expanded.media
        } catch {
            reporter.line("\(error)")
            throw ExitCode(1)
        }
        for item in items {
            let source = MediaSource(item)
            if let path = source.path, !FileManager.default.fileExists(atPath: path) {
                reporter.line("\(item): file not found")
                failed = true
                continue
            }
            if let problem = SourceDiagnosis.unknownScheme(source) {
                reporter.line("\(item): \(problem)")
                failed = true
                continue
            }
            do {
                var info = try MediaInfo.discover(uri: source.uri)
                // An HLS multi-variant playlist: the languages and the variants are the playlist's to say.
                if source.uri.lowercased().hasSuffix(".m3u8"), let master = await MediaRendition.load(source.uri) {
                    info = Info.withPlaylist(info, variants: master.variants, renditions: master.renditions)
                }
                print(Info.format(info, name: item))
            } catch {
                // An unreachable server in words; the discoverer says "Internal data stream error.".
                reporter.line("\(item): \(await SourceDiagnosis.unreachable(source) ?? "\(error)")")
                failed = true
            }
        }
        if failed { throw ExitCode(1) }
    }

    static func format(_ info: MediaInfo, name: String) -> String {
        var lines = ["\(name)"]
        lines.append("  duration:  \(info.duration.map { $0.description } ?? "unknown")\(info.isLive ? " (live)" : "")")
        lines.append("  container: \(info.container ?? "none")")
        for (index, stream) in info.streams.enumerated() {
            var line = "  stream \(index): \(stream.kind.rawValue), \(stream.codec)"
            if let w = stream.width, let h = stream.height { line += ", \(w)x\(h)" }
            if let fps = stream.frameRate { line += String(format: ", %.3g fps", fps) }
            if let ch = stream.channels { line += ", \(ch) channel\(ch == 1 ? "" : "s")" }
            if let rate = stream.sampleRate { line += ", \(rate) Hz" }
            if let br = stream.bitrate { line += ", \(br / 1000) kbit/s" }
            if let lang = stream.language { line += ", language \(lang)" }
            lines.append(line)
        }
        lines.append(contentsOf: LanguageOptions.optionLines(info))
        return lines.joined(separator: "\n")
    }
}

extension Info {
    /// `info` completed from an HLS multi-variant playlist: the container named in words (the discoverer says
    /// `application/x-hls`), and each audio and subtitle stream's language from the playlist's EXT-X-MEDIA
    /// renditions of that type, in order, where the stream itself has none (the discoverer gives `und`).
    static func withPlaylist(_ info: MediaInfo, variants: Int, renditions: [MediaRendition]) -> MediaInfo {
        var info = info
        info.container = "HLS multi-variant playlist (\(variants) variant\(variants == 1 ? "" : "s"))"
        for (kind, type) in [(MediaInfo.Stream.Kind.audio, "AUDIO"), (.subtitle, "SUBTITLES")] {
            let languages = renditions.filter { $0.type == type }.map(\.language)
            let indices = info.streams.indices.filter { info.streams[$0].kind == kind }
            for (index, language) in zip(indices, languages) where info.streams[index].language == nil {
                info.streams[index].language = language
            }
        }
        return info
    }
}
