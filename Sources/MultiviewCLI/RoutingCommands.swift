import ArgumentParser
import Foundation
import Multiview
import Routing

/// The routing flags of `multiview play` (names are an interface used by scripts: keep them stable).
struct RoutingOptions: ParsableArguments {
    @Option(name: .long, help: "The PulseAudio sink (audio route) every view plays to (default: the server's default sink).")
    var audioRoute: String?

    @Option(name: .long, help: "Mark a sink non-mixable: only the preferred view's audio plays there (repeatable).")
    var nonMixable: [String] = []

    @Option(name: .long, help: "Preferred view (1-based) for non-mixable audio routes; `audio N` / keys `a N` change it.")
    var preferAudio: Int?

    @Option(name: .long, help: "Preferred view (1-based) for the external display; `external N` / keys `v N` change it.")
    var preferExternal: Int?

    @Option(name: .long, help: "Keep view N off the external display (allowsExternalPlayback = false; repeatable).")
    var localOnly: [Int] = []

    @Option(name: .long, help: "X display standing for the TV (e.g. :91): the preferred view's video is shown there too.")
    var externalDisplay: String?

    @Option(name: .long, help: "Size of the external display window, WIDTHxHEIGHT.")
    var externalSize: String = "1280x720"

    var isRequested: Bool {
        audioRoute != nil || !nonMixable.isEmpty || preferAudio != nil || preferExternal != nil || !localOnly.isEmpty
            || externalDisplay != nil
    }

    func validate() throws {
        for n in [preferAudio, preferExternal].compactMap({ $0 }) + localOnly where n < 1 {
            throw ValidationError("view numbers are 1-based")
        }
        if parsedSize == nil { throw ValidationError("--external-size must look like 1280x720") }
    }

    /// `--external-size WxH`, both sides at least 16; nil for anything else (`1280x720xfoo` and `x1280x720` were
    /// taken once: the parts that were no number were dropped, and empty parts skipped).
    var parsedSize: (Int, Int)? {
        let parts = externalSize.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2, let width = parts[0], let height = parts[1], width >= 16, height >= 16 else { return nil }
        return (width, height)
    }

    /// The arbiter for `play`, started; nil without routing flags. Problems are one clear line each, and the views
    /// play anyway (no PulseAudio: no audio; unknown route: the default sink).
    func makeArbiter(reporter: TerminalReporter, viewCount: Int) async -> RoutingArbiter? {
        guard isRequested else { return nil }
        var preferAudio = preferAudio, preferExternal = preferExternal
        for (flag, value) in [("--prefer-audio", preferAudio), ("--prefer-external", preferExternal)] {
            if let value, value > viewCount {
                FileHandle.standardError.write(Data("error: \(flag) \(value): there are only \(viewCount) views; no preference\n".utf8))
            }
        }
        if let p = preferAudio, p > viewCount { preferAudio = nil }
        if let p = preferExternal, p > viewCount { preferExternal = nil }
        var configuration = RoutingConfiguration(
            audioRoute: audioRoute, nonMixable: Set(nonMixable), preferredAudio: preferAudio,
            preferredExternal: preferExternal, localOnly: Set(localOnly), externalDisplay: externalDisplay)
        if let (w, h) = parsedSize { configuration.externalWidth = w; configuration.externalHeight = h }
        let arbiter = RoutingArbiter(configuration: configuration)
        let events = await arbiter.events()
        Task { for await event in events { reporter.note("routing: \(event)") } }
        do {
            try await arbiter.start()
        } catch {
            FileHandle.standardError.write(Data("error: --audio-route: \(error); playing to the default sink\n".utf8))
            do { try await arbiter.start(useDefaultSink: true) } catch {
                FileHandle.standardError.write(Data("error: audio routing: \(error)\n".utf8))
            }
        }
        return arbiter
    }
}

/// `multiview routes`: the route picker's list.
struct Routes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List video outputs (video-capable destinations first) and audio routes (mixable or non-mixable, default marked).",
        discussion: """
        Pick them with `multiview play --audio-route SINK --external-display :N …`. A sink is non-mixable when marked with
        --non-mixable, when it carries the property multiview.non-mixable=1, or when it is an AirPlay (RAOP) sink.
        """
    )

    @Option(name: .long, help: "Mark a sink non-mixable in the listing (as `play --non-mixable` would).")
    var nonMixable: [String] = []

    func run() async throws {
        let local = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        print("Video outputs:")
        let displays = ExternalDisplayWindow.localDisplays()
        var anyVideo = false
        for display in displays {
            guard let (w, h) = ExternalDisplayWindow.probe(display: display) else { continue }
            anyVideo = true
            let role = display == local || ":\(local.drop { $0 == ":" })" == display
                ? "the grid window's display (DISPLAY)" : "external display: --external-display \(display)"
            print("  \(display)  \(w)x\(h)  \(role)")
        }
        if !anyVideo { print("  (no X display answers: headless only)") }
        print("Audio routes:")
        var routes: [AudioRoute] = []
        do {
            let client = try await PulseAudioClient.connect()
            routes = try await AudioRoutes.list(client: client, markedNonMixable: Set(nonMixable))
            for route in routes { print("  \(route)") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
        // A name no sink has was silently ignored: say so (after the listing, which names the sinks there are).
        let names = Set(routes.map(\.sinkName))
        let unknown = nonMixable.filter { !names.contains($0) }
        for name in unknown {
            FileHandle.standardError.write(Data("error: --non-mixable \(name): no such sink (the sink names are listed above)\n".utf8))
        }
        if !unknown.isEmpty { throw ExitCode(64) }
    }
}
