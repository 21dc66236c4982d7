import Foundation
import GStreamer

/// How a stage runs.
public struct StageConfiguration: Sendable {
    public var sources: [MediaSource]
    /// Force headless. Without it the stage opens a window when a display is reachable.
    public var headless: Bool
    /// Stop after this many seconds of wall time (nil: play to the end).
    public var duration: Double?
    /// nil: PulseAudio when a server answers, else a fake sink.
    public var audio: AudioOutput?
    public var tileWidth: Int
    public var tileHeight: Int
    /// Print one status line per interval.
    public var statusInterval: Duration
    /// Coordinated views (one clock, group transport): the coordination layer plugs in here.
    public var coordination: (any StageCoordination)?
    /// Spare tiles kept free in the window for views added while running (`add URI`).
    public var spareTiles: Int = 0
    /// Follows every view (the priority manager plugs in here): labels, extra commands, clearer failures.
    public var observer: (any StageViewObserver)?
    /// Audio routes and the external display: the routing layer plugs in here.
    public var routing: (any StageRouting)?
    /// Told about every view's player right after it is created (the remote control follows them).
    public var playerCreated: (@Sendable (Player) async -> Void)?
    /// I-frame trick play and scrub previews (`ff N`, `rew N`, `preview N T PATH`): the trick-play layer plugs in here.
    public var trickPlay: (any StageTrickPlay)?

    public init(sources: [MediaSource], headless: Bool = false, duration: Double? = nil, audio: AudioOutput? = nil,
                tileWidth: Int = 480, tileHeight: Int = 270, statusInterval: Duration = .seconds(1)) {
        self.sources = sources; self.headless = headless; self.duration = duration; self.audio = audio
        self.tileWidth = tileWidth; self.tileHeight = tileHeight; self.statusInterval = statusInterval
    }
}

/// What the coordination layer provides to a stage (defined here so the stage need not import it).
public protocol StageCoordination: Sendable {
    /// Called for each view before its media is loaded: connect it to the group.
    func attach(_ player: Player, source: MediaSource) async throws
    /// Called once every initial view is loaded: start the group.
    func start(_ players: [Player]) async throws
    /// A view added while running joins the group in sync.
    func join(_ player: Player) async throws
    /// The view's coordination state for its tag and status line ("suspended: stallRecovery"), nil when plain.
    func label(for player: Player) async -> String?
    /// "What happened?" on one view: replay the last seconds at 2x and rejoin; the others never pause.
    func whatHappened(_ player: Player) async throws
}

/// Something that follows every view of a stage (defined here so the stage need not import it): it sees each
/// player before its media loads, adds a label to the view's tag and status line, handles the commands the stage
/// leaves to it (`priority N high`) and may explain a view's failure better than GStreamer did.
public protocol StageViewObserver: Sendable {
    /// Called before the view loads `source`; tile size nil when headless.
    func attach(_ player: Player, source: MediaSource, tileWidth: Int?, tileHeight: Int?) async
    /// Short label for the view's tag and status line ("high 1920x1080 5.5M"), nil for none.
    func label(forView number: Int) async -> String?
    /// Handles a command the stage does not; returns the note to print.
    func perform(_ command: StageCommand) async -> String
    /// The same failure, with a clearer cause when the observer knows one.
    func refine(_ failure: PlayerError) async -> PlayerError
}

/// What the routing layer provides to a stage (defined here so the stage need not import it).
public protocol StageRouting: Sendable {
    /// The configuration a view's player gets (audio device, stream tags, external display branch).
    func configure(_ configuration: PlayerConfiguration) async -> PlayerConfiguration
    /// A view's player exists (before its media is loaded).
    func attach(_ player: Player) async
    /// A view ended or failed: preferences for it reset.
    func viewEnded(_ number: Int) async
    /// `audio N` / `a N`: the preferred view for non-mixable audio routes (nil: none).
    func preferAudio(_ number: Int?) async
    /// `external N` / `v N`: the preferred view for the external display (nil: none).
    func preferExternal(_ number: Int?) async
    /// Which routes the view owns, for its tag ("♪ living-room  ▶ TV"), nil when none.
    func label(for number: Int) async -> String?
}

/// What the trick-play layer provides to a stage (defined here so the stage need not import it).
public protocol StageTrickPlay: Sendable {
    /// Starts trick play at `rate` on the (paused) view from `position` seconds; returns the note to print.
    func start(_ player: Player, source: MediaSource, rate: Double, from position: Double) async -> String
    /// Ends trick play on the view if it runs; returns the media time to resume at (nil when it was not running).
    func stop(view number: Int) async -> Double?
    /// Writes a scrub preview of the view at `seconds` to `path`; returns the note to print.
    func preview(_ player: Player, source: MediaSource, seconds: Double, path: String) async -> String
}

/// How a stage run ended.
public struct StageOutcome: Sendable {
    public var views: [ViewIdentity]
    /// One per failed view.
    public var failures: [PlayerError]
    /// Views that reached PLAYING.
    public var played: Set<Int>
    public var usedWindow: Bool
    public var audio: AudioOutput
    /// 0 when every view played and none failed.
    public var exitCode: Int32 { failures.isEmpty && played.count == views.count ? 0 : 1 }
}

/// Where the stage writes its progress (stdout/stderr in the CLI, a recorder in tests).
public protocol StageReporter: Sendable {
    func status(_ line: String)
    func note(_ line: String)
}

/// Runs several players side by side, each on its own pipeline, in one grid window or headless.
///
/// Threading: the actor owns the players list, per-view bookkeeping and the run loop. Player events,
/// commands (keyboard thread, stdin thread) and timer ticks all arrive as `Input`s on one stream, so they are
/// handled one at a time, in order.
public actor Stage {
    public let configuration: StageConfiguration
    private let reporter: StageReporter

    private enum Input: Sendable {
        case player(Int, PlayerEvent)
        case command(StageCommand)
        case tick
        case deadline
    }

    private var views: [ViewIdentity] = []
    private var players: [Int: Player] = [:]
    /// What each view plays (the trick-play layer needs the HLS URL).
    private var viewSources: [Int: MediaSource] = [:]
    private var statuses: [Int: PlayerStatus] = [:]
    private var infos: [Int: ViewMediaInfo] = [:]
    private var failures: [Int: PlayerError] = [:]
    private var ended: Set<Int> = []
    /// Views whose PulseAudio stream is lost (server gone).
    private var audioLostViews: Set<Int> = []
    private var played: Set<Int> = []
    /// The observer's latest label per view, refreshed every tick (the status line is built synchronously).
    private var observerLabels: [Int: String] = [:]
    private var window: GridWindow?
    private var inputContinuation: AsyncStream<Input>.Continuation?
    private var startInstant = ContinuousClock.now
    private var quitRequested = false
    /// Said once: the kernel refused real-time scheduling for the video render threads.
    private var realtimeNoteGiven = false
    /// Commands typed before every view has started are kept, in order, until they have (or the start-up
    /// grace period ends): a `+10` typed while loading then moves every view, not only the fast ones.
    private var pendingCommands: [StageCommand] = []
    private var startupComplete = false
    private static let startupGrace: Duration = .seconds(15)

    public init(configuration: StageConfiguration, reporter: StageReporter) {
        self.configuration = configuration
        self.reporter = reporter
    }

    /// Sends a command to the running stage (from stdin, a test, …).
    public func send(_ command: StageCommand) {
        inputContinuation?.yield(.command(command))
    }

    /// The grid window, when the stage opened one.
    public var gridWindow: GridWindow? { window }

    /// The players (for tests and the coordination layer). Empty until `run` has created them.
    public var currentPlayers: [Player] { players.keys.sorted().compactMap { players[$0] } }

    /// Plays every source until all have ended, `quit`, or the duration elapsed.
    public func run(commands: AsyncStream<StageCommand>? = nil) async -> StageOutcome {
        startInstant = .now
        views = configuration.sources.enumerated().map { ViewIdentity(number: $0.offset + 1, name: $0.element.displayName) }

        // Output choice: a window when a display is reachable and not told otherwise, else headless.
        if !configuration.headless {
            do {
                window = try GridWindow(tileCount: views.count + configuration.spareTiles, tileWidth: configuration.tileWidth,
                                        tileHeight: configuration.tileHeight)
            } catch {
                reporter.note("no display (\(error)): playing headless")
            }
        }
        let audio: AudioOutput
        if let configured = configuration.audio {
            audio = configured
        } else {
            audio = AudioOutput.detect()
            if case .fakeSink = audio { reporter.note("no PulseAudio server reachable: audio goes to a fake sink") }
        }

        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        inputContinuation = continuation
        window?.start { command in continuation.yield(.command(command)) }
        if let commands {
            Task { for await command in commands { continuation.yield(.command(command)) } }
        }
        let interval = configuration.statusInterval
        let ticker = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                continuation.yield(.tick)
            }
        }
        var deadlineTask: Task<Void, Error>?
        if let duration = configuration.duration {
            deadlineTask = Task {
                try await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                continuation.yield(.deadline)
            }
        }

        // Build every player first, then start them all; a view that cannot be built is a failure of that
        // view only.
        self.audio = audio
        for view in views { await makePlayer(view, source: configuration.sources[view.number - 1]) }
        let initial = views.compactMap { view in players[view.number].map { (view, $0) } }
        if let coordination = configuration.coordination {
            // Coordinated: connect, load, then one group start (every view ready, all start at one instant).
            let sources = configuration.sources
            let reporter = self.reporter
            Task {
                var loaded: [Player] = []
                for (view, player) in initial {
                    do {
                        try await coordination.attach(player, source: sources[view.number - 1])
                        try await player.load(sources[view.number - 1])
                        loaded.append(player)
                    } catch {
                        // The player reports its own failure as an event.
                        if !(error is PlayerError) { reporter.note("\(view): \(error)") }
                    }
                }
                do { try await coordination.start(loaded) } catch { reporter.note("coordinated start: \(error)") }
            }
        } else {
            for (view, player) in initial {
                let source = configuration.sources[view.number - 1]
                Task {
                    do {
                        try await player.load(source)
                        try await player.play()
                    } catch {
                        // Failures also arrive as `.failed` events; nothing more to do here.
                    }
                }
            }
        }
        reporter.status(statusLine())

        for await input in inputs {
            await handle(input)
            if quitRequested || allViewsDone { break }
        }

        ticker.cancel()
        deadlineTask?.cancel()
        for player in players.values { await player.stop() }
        // Trick play draws into the tiles: end it before the window goes (a sink drawing into a destroyed X window
        // is a fatal X error).
        for view in views { _ = await configuration.trickPlay?.stop(view: view.number) }
        window?.close()
        inputContinuation = nil
        continuation.finish()
        let outcome = StageOutcome(views: views, failures: views.compactMap { failures[$0.number] },
                                   played: played, usedWindow: window != nil, audio: audio)
        return outcome
    }

    private var audio: AudioOutput = .fakeSink

    /// Creates one view's player and forwards its events into the stage's input stream.
    private func makePlayer(_ view: ViewIdentity, source: MediaSource) async {
        guard let continuation = inputContinuation else { return }
        let index = view.number - 1
        let video: VideoOutput = window.flatMap { index < $0.tiles.count ? .window($0.tiles[index]) : nil } ?? .fakeSink
        var config = PlayerConfiguration(view: view, video: video, audio: audio, visualizeAudioOnly: window != nil)
        if let routing = configuration.routing { config = await routing.configure(config) }
        do {
            let player = try Player(configuration: config)
            players[view.number] = player
            viewSources[view.number] = source
            if let observer = configuration.observer {
                await observer.attach(player, source: source, tileWidth: window.map { _ in configuration.tileWidth },
                                      tileHeight: window.map { _ in configuration.tileHeight })
            }
            await configuration.routing?.attach(player)
            await configuration.playerCreated?(player)
            let events = await player.events()
            Task { for await event in events { continuation.yield(.player(view.number, event)) } }
        } catch let error as PlayerError {
            recordFailure(error)
        } catch {
            recordFailure(PlayerError(view: view, cause: .setup("\(error)")))
        }
    }

    /// Adds a view while running; coordinated, it joins the group in sync.
    private func addView(_ uri: String) async {
        let source = MediaSource(uri)
        let view = ViewIdentity(number: views.count + 1, name: source.displayName)
        if let window, view.number > window.tiles.count {
            reporter.note("no free tile for \(view): start with --spare-tiles or headless")
            return
        }
        views.append(view)
        await makePlayer(view, source: source)
        guard let player = players[view.number] else { return }
        do {
            if let coordination = configuration.coordination {
                try await coordination.attach(player, source: source)
                try await player.load(source)
                try await coordination.join(player)
            } else {
                try await player.load(source)
                try await player.play()
            }
            reporter.note("added \(view)")
        } catch let error as PlayerError {
            recordFailure(error)
        } catch {
            recordFailure(PlayerError(view: view, cause: .setup("\(error)")))
        }
    }

    private var allViewsDone: Bool {
        views.allSatisfy { ended.contains($0.number) || failures[$0.number] != nil }
    }

    /// Every view has played or failed: start-up is over.
    private var allViewsStarted: Bool {
        views.allSatisfy { played.contains($0.number) || failures[$0.number] != nil }
    }

    private func recordFailure(_ error: PlayerError) {
        guard failures[error.view.number] == nil else { return }
        failures[error.view.number] = error
        window?.setMessage("\(error.view)\nFAILED: \(error.cause)", tile: error.view.number - 1)
    }

    private func handle(_ input: Input) async {
        switch input {
        case .player(let number, let event):
            switch event {
            case .status(let status):
                statuses[number] = status
                if status.state == .playing { played.insert(number) }
                if status.state == .playing, let failure = failures.removeValue(forKey: number) {
                    // A failed view plays again only when something reloaded it (the priority manager does when
                    // a view's server comes back): it is no longer failed.
                    window?.setMessage(nil, tile: number - 1)
                    reporter.note("\(failure.view) recovered")
                }
                await updateTag(number)
                if !startupComplete && allViewsStarted { await completeStartup() }
            case .mediaInfo(let info):
                infos[number] = info
                await updateTag(number)
            case .endOfStream:
                ended.insert(number)
                await configuration.routing?.viewEnded(number)
            case .failed(let error):
                recordFailure(await configuration.observer?.refine(error) ?? error)
                await configuration.routing?.viewEnded(number)
                if !startupComplete && allViewsStarted { await completeStartup() }
            case .interruption(let began):
                reporter.note("view \(number): audio \(began ? "interrupted (stream corked by PulseAudio)" : "interruption ended")")
            case .audioOutput(let lost, let reason):
                // Every view loses its stream when the server goes: one line for all of them, one when it is back.
                if lost {
                    if audioLostViews.isEmpty { reporter.note("audio output lost (\(reason)): the views play on without sound until PulseAudio is back") }
                    audioLostViews.insert(number)
                } else if audioLostViews.remove(number) != nil && audioLostViews.isEmpty {
                    reporter.note("audio output back on PulseAudio")
                }
            case .warning, .seekCompleted, .rateChanged:
                break
            }
        case .command(let command):
            if startupComplete {
                await perform(command)
            } else {
                pendingCommands.append(command)
            }
        case .tick:
            if !startupComplete && ContinuousClock.now - startInstant > Stage.startupGrace {
                await completeStartup()
            }
            await refreshObserverLabels()
            reporter.status(statusLine())
            if !realtimeNoteGiven, let view = players.values.first(where: { $0.realtimeRendering == false })?.view {
                realtimeNoteGiven = true
                reporter.note("\(view): real-time scheduling for video rendering not permitted (needs CAP_SYS_NICE or an rtprio limit); views may drift apart by a few ms under load")
            }
        case .deadline:
            reporter.status(statusLine())
            quitRequested = true
        }
    }

    private func completeStartup() async {
        startupComplete = true
        let queued = pendingCommands
        pendingCommands = []
        for command in queued where !quitRequested { await perform(command) }
    }

    private func perform(_ command: StageCommand) async {
        let live = views.compactMap { failures[$0.number] == nil ? players[$0.number] : nil }
        switch command {
        case .quit:
            quitRequested = true
        case .status:
            reporter.status(statusLine())
        case .togglePause:
            let anyPlaying = statuses.values.contains { $0.state == .playing }
            await perform(anyPlaying ? .pause : .play)
        case .add(let uri):
            await addView(uri)
        case .priority:
            guard let observer = configuration.observer else {
                reporter.note("'\(command)' needs HLS views (http://…/master.m3u8) or --priority/--bandwidth")
                return
            }
            reporter.note(await observer.perform(command))
            await refreshObserverLabels()
        case .preferAudio(let number), .preferExternal(let number):
            guard let routing = configuration.routing else {
                reporter.note("'\(command)' needs audio routing (--audio-route / --external-display)")
                return
            }
            if case .preferAudio = command { await routing.preferAudio(number) } else { await routing.preferExternal(number) }
            for view in views { await updateTag(view.number) }
        case .whatHappened(let number):
            guard let coordination = configuration.coordination, let player = players[number] else {
                reporter.note("'r \(number)' needs --coordinated and an existing view")
                return
            }
            // Runs on its own: the stage keeps handling input while the view catches up.
            let reporter = self.reporter
            Task {
                do {
                    try await coordination.whatHappened(player)
                    reporter.note("view \(number) caught up and rejoined")
                } catch {
                    reporter.note("what happened on view \(number): \(error)")
                }
            }
        case .audioLanguage(let number, let language):
            guard let player = players[number] else { return reporter.note("no view \(number)") }
            do { try await player.selectAudio(language: language); reporter.note("view \(number): audio \(language)") }
            catch { reporter.note("\(error)") }
        case .subtitles(let number, let language):
            guard let player = players[number] else { return reporter.note("no view \(number)") }
            do {
                try await player.selectSubtitles(language.map { .language($0) } ?? .off)
                reporter.note("view \(number): subtitles \(language ?? "off")")
            } catch { reporter.note("\(error)") }
        case .trickPlay(let number, let rate):
            guard let trickPlay = configuration.trickPlay, configuration.coordination == nil,
                  let player = players[number], let source = viewSources[number] else {
                return reporter.note("'\(rate > 0 ? "ff" : "rew") \(number)' needs an existing uncoordinated view")
            }
            try? await player.pause()
            let from = (await player.position).map { Double($0.nanoseconds) / 1e9 } ?? 0
            reporter.note(await trickPlay.start(player, source: source, rate: rate, from: from))
        case .preview(let number, let seconds, let path):
            guard let trickPlay = configuration.trickPlay, let player = players[number], let source = viewSources[number] else {
                return reporter.note("'preview \(number)' needs an existing view")
            }
            reporter.note(await trickPlay.preview(player, source: source, seconds: seconds, path: path))
        case .play, .pause, .seekBy, .seekTo, .rate:
            await endTrickPlay(live: live)
            if configuration.coordination != nil {
                await performCoordinated(command, live: live)
                return
            }
            // Each view acts on its own here (uncoordinated); run them concurrently so no view waits for another.
            await withTaskGroup(of: Void.self) { group in
                for player in live {
                    group.addTask {
                        switch command {
                        case .play: try? await player.play()
                        case .pause: try? await player.pause()
                        case .seekBy(let s): try? await player.seek(by: s)
                        case .seekTo(let s): try? await player.seek(to: .seconds(s))
                        case .rate(let r): try? await player.setRate(r)
                        default: break
                        }
                    }
                }
            }
            if case .seekBy = command { ended.removeAll() }
            if case .seekTo = command { ended.removeAll() }
            reporter.note("\(command) done")
        }
    }

    /// A transport command ends trick play: each view that ran it seeks to where it stopped (then the command acts).
    private func endTrickPlay(live: [Player]) async {
        guard let trickPlay = configuration.trickPlay else { return }
        for player in live {
            if let position = await trickPlay.stop(view: player.view.number) {
                try? await player.seek(to: .seconds(position))
                reporter.note("view \(player.view.number): trick play ended at \(String(format: "%.1f", position)) s")
            }
        }
    }

    /// Coordinated: the command goes through one view's coordinator to the whole group.
    private func performCoordinated(_ command: StageCommand, live: [Player]) async {
        guard let player = live.first else { return }
        do {
            switch command {
            case .play: try await player.play()
            case .pause: try await player.pause()
            case .seekBy(let s): try await player.seek(by: s)
            case .seekTo(let s): try await player.seek(to: .seconds(s))
            case .rate(let r): try await player.setRate(r)
            default: break
            }
        } catch {
            reporter.note("\(command): \(error)")
        }
        ended.removeAll()
        reporter.note("\(command) done")
    }

    private func updateTag(_ number: Int) async {
        guard window != nil, let player = players[number], let view = views.first(where: { $0.number == number })
        else { return }
        let info = infos[number].map { $0.resolutionText } ?? "…"
        var state = statuses[number].map { status -> String in
            if let waiting = status.waitingToPlay { return "waiting: \(waiting)" }
            return status.state.description.lowercased()
        } ?? ""
        if let label = await configuration.coordination?.label(for: player) { state = label }
        if let routes = await configuration.routing?.label(for: number) { state += "  \(routes)" }
        let extra = observerLabels[number].map { "  \($0)" } ?? ""
        await player.setTag("\(view.number) \(view.name)  \(info)  \(state)\(extra)")
    }

    /// Fetches the observer's labels; a changed label (a new rung, a new priority) updates that view's tag.
    private func refreshObserverLabels() async {
        guard let observer = configuration.observer else { return }
        for view in views {
            let label = await observer.label(forView: view.number)
            if label != observerLabels[view.number] {
                observerLabels[view.number] = label
                await updateTag(view.number)
            }
        }
    }

    /// "[  3.0s] 1 angle1-wide PLAYING 0:00:03.012/0:00:24.000 | 2 …"
    private func statusLine() -> String {
        let seconds = (ContinuousClock.now - startInstant).inSeconds
        var parts: [String] = []
        for view in views {
            var text = "\(view.number) \(view.name) "
            if let failure = failures[view.number] {
                text += "FAILED (\(failure.cause))"
            } else if ended.contains(view.number) {
                text += "ENDED"
            } else if let status = statuses[view.number] {
                text += status.state.description
                if let waiting = status.waitingToPlay { text += " [\(waiting)]" }
                // Sampled by querying this view's pipeline (a query, not bus polling), once per line.
                if let pipeline = players[view.number]?.pipeline, let position = pipeline.queryPosition() {
                    text += " \(position)"
                    if let duration = pipeline.queryDuration() { text += "/\(duration)" }
                }
                if let label = observerLabels[view.number] { text += " [\(label)]" }
            } else {
                text += "opening"
            }
            parts.append(text)
        }
        return String(format: "[%6.1fs] ", seconds) + parts.joined(separator: " | ")
    }
}
