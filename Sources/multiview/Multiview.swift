import ArgumentParser
import Foundation
import GStreamer
import Multiview

@main
struct MultiviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multiview",
        abstract: "Synchronized multiview audio/video player for Linux (GStreamer + PulseAudio).",
        subcommands: [Play.self, Info.self],
        defaultSubcommand: Play.self
    )
}

/// Prints status lines on stdout and notes on stderr, one line each, flushed at once (scripts read them live).
struct TerminalReporter: StageReporter {
    func status(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    func note(_ line: String) { FileHandle.standardError.write(Data("note: \(line)\n".utf8)) }
}

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play several files or URIs side by side: one grid window, or headless.",
        discussion: """
        Keys in the window: space = play/pause all, ←/→ = −/+10 s, q or Esc = quit.
        The same on stdin: \(StageCommand.help).
        Exit status: 0 when every view played; 1 when any view failed (one line per failed view on stderr).
        """
    )

    @Flag(name: .long, help: "No window: video to fake sinks, audio to PulseAudio if reachable (automatic without a display).")
    var headless = false

    @Option(name: .long, help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .long, help: "Send audio to fake sinks even when PulseAudio is reachable.")
    var noAudio = false

    @Option(name: .long, help: "Tile size in the window, WIDTHxHEIGHT.")
    var tile: String = "480x270"

    @Argument(help: "Media files or URIs (file://, http://…).")
    var media: [String]

    func validate() throws {
        if media.isEmpty { throw ValidationError("give at least one file or URI") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if parseTile() == nil { throw ValidationError("--tile must look like 480x270") }
    }

    private func parseTile() -> (Int, Int)? {
        let parts = tile.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 16, parts[1] >= 16 else { return nil }
        return (parts[0], parts[1])
    }

    func run() async throws {
        guard GStreamer.ensureInitialized() else {
            FileHandle.standardError.write(Data("error: GStreamer could not be initialised\n".utf8))
            throw ExitCode(2)
        }
        let (width, height) = parseTile() ?? (480, 270)
        let configuration = StageConfiguration(
            sources: media.map(MediaSource.init), headless: headless, duration: duration,
            audio: noAudio ? .fakeSink : nil, tileWidth: width, tileHeight: height)
        let stage = Stage(configuration: configuration, reporter: TerminalReporter())
        let outcome = await stage.run(commands: StdinCommands.stream())
        for failure in outcome.failures {
            FileHandle.standardError.write(Data("\(failure)\n".utf8))
        }
        for view in outcome.views where !outcome.played.contains(view.number)
            && !outcome.failures.contains(where: { $0.view == view }) {
            FileHandle.standardError.write(Data("\(view): never started playing\n".utf8))
        }
        if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
    }
}

/// Reads commands from stdin on a thread of its own (readLine blocks); ends at EOF.
enum StdinCommands {
    static func stream() -> AsyncStream<StageCommand> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.isEmpty { continue }
                    if let command = StageCommand.parse(trimmed) {
                        continuation.yield(command)
                    } else {
                        FileHandle.standardError.write(Data("unknown command '\(trimmed)'; \(StageCommand.help)\n".utf8))
                    }
                }
                continuation.finish()
            }
            thread.name = "multiview-stdin"
            thread.start()
        }
    }
}

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Describe media: duration, container, and every stream's codec, resolution, frame rate, channels.")

    @Argument(help: "Media files or URIs.")
    var media: [String]

    func run() throws {
        var failed = false
        for item in media {
            let source = MediaSource(item)
            if let path = source.path, !FileManager.default.fileExists(atPath: path) {
                FileHandle.standardError.write(Data("\(item): file not found\n".utf8))
                failed = true
                continue
            }
            do {
                let info = try MediaInfo.discover(uri: source.uri)
                print(Info.format(info, name: item))
            } catch {
                FileHandle.standardError.write(Data("\(item): \(error)\n".utf8))
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
        return lines.joined(separator: "\n")
    }
}
