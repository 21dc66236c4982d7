import Foundation
import GStreamer

/// Runs several players side by side, each on its own pipeline, in one grid window or headless.
///
/// Threading: the actor owns the views, their players and per-view bookkeeping, the run's tasks and the command
/// tasks. Player events, commands (keyboard thread, stdin thread, remote control) and timer ticks all arrive as
/// `Input`s on one stream and are handled one at a time, in order. Handling an input never waits for a player's
/// transport: each command runs as a task of its own (`StageCommandTasks`, in `Stage+Commands.swift`), so a view that
/// does not answer never holds the status line, `q` or the other views. The run owns every task it starts and
/// cancels them all when it ends; the views are then torn down off the cooperative pool within
/// `StageShutdown.deadline` (`StageShutdown.swift`).
public actor Stage {
    public let configuration: StageConfiguration
    let reporter: StageReporter

    enum Input: Sendable {
        case player(Int, PlayerEvent)
        case command(StageCommand)
        case tick
        case deadline
        /// Nothing to do: the loop checks whether the run is to end (a task asked for it).
        case wake
    }

    var views: [ViewIdentity] = []
    var players: [Int: Player] = [:]
    /// What each view plays (the trick-play layer needs the HLS URL).
    var viewSources: [Int: MediaSource] = [:]
    var statuses: [Int: PlayerStatus] = [:]
    var infos: [Int: ViewMediaInfo] = [:]
    var failures: [Int: PlayerError] = [:]
    var ended: Set<Int> = []
    /// Views whose PulseAudio stream is lost (server gone).
    var audioLostViews: Set<Int> = []
    var played: Set<Int> = []
    /// The observer's latest label per view, refreshed every tick (the status line is built synchronously).
    var observerLabels: [Int: String] = [:]
    /// Failed views the observer is retrying (an HLS server outage): RETRYING in the status, not FAILED.
    var retryingViews: Set<Int> = []
    var window: GridWindow?
    var audio: AudioOutput = .fakeSink
    var inputContinuation: AsyncStream<Input>.Continuation?
    var startInstant = ContinuousClock.now
    /// Set once the run is to end (the loop stops after the input being handled).
    var endReason: StageEndReason?
    /// Said once: the kernel refused real-time scheduling for the video render threads.
    var realtimeNoteGiven = false
    /// Commands typed before every view has started are kept, in order, until they have (or the start-up
    /// grace period ends): a `+10` typed while loading then moves every view, not only the fast ones.
    var pendingCommands: [StageCommand] = []
    var startupComplete = false
    static let startupGrace: Duration = .seconds(15)
    /// How long `s` and `q` wait for the commands typed before them.
    static let settleLimit: Duration = .seconds(1)
    /// The tasks of the commands being carried out (newest per target).
    var commandTasks = StageCommandTasks()
    /// Play or pause, as the newest play/pause command asked, while one is still being carried out (so two quick
    /// toggles pause then play, whatever the views reported meanwhile).
    var intendedPlaying: Bool?
    /// The run's own tasks (input forwarding, ticker, deadline, start-up, event forwarding): cancelled when it ends.
    var runTasks: [Task<Void, Never>] = []

    public init(configuration: StageConfiguration, reporter: StageReporter) {
        self.configuration = configuration
        self.reporter = reporter
    }

    /// Sends a command to the running stage (from stdin, a test, …).
    public func send(_ command: StageCommand) {
        inputContinuation?.yield(.command(command))
    }

    /// Ends the run now, even during start-up and without waiting for commands in flight (a signal; `quit` waits
    /// for the commands typed before it).
    public func endNow() {
        end(.quit)
    }

    /// The grid window, when the stage opened one.
    public var gridWindow: GridWindow? { window }

    /// The players (for tests and the coordination layer). Empty until `run` has created them.
    public var currentPlayers: [Player] { players.keys.sorted().compactMap { players[$0] } }

    /// Plays every source until all have ended, `quit`, or the duration elapsed; then tears every view down (at
    /// most `StageShutdown.deadline`, naming a view that would not stop).
    public func run(commands: AsyncStream<StageCommand>? = nil) async -> StageOutcome {
        startInstant = .now
        views = configuration.sources.enumerated().map { ViewIdentity(number: $0.offset + 1, name: Stage.viewName($0.element)) }
        openOutputs()

        let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
        inputContinuation = continuation
        window?.start { command in continuation.yield(.command(command)) }
        if let commands {
            runTasks.append(Task { for await command in commands { continuation.yield(.command(command)) } })
        }
        let interval = configuration.statusInterval
        runTasks.append(Task {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                continuation.yield(.tick)
            }
        })
        if let duration = configuration.duration {
            do {
                let seconds = try StageLimits.duration(duration, input: "duration \(duration)")
                runTasks.append(Task {
                    do { try await Task.sleep(for: .milliseconds(Int64(seconds * 1000))) } catch { return }
                    continuation.yield(.deadline)
                })
            } catch {
                reporter.error("\(error)")
                endReason = .invalidConfiguration
            }
        }

        // Build every player first, then start them all; a view that cannot be built is a failure of that
        // view only.
        if endReason == nil {
            for view in views { await makePlayer(view, source: configuration.sources[view.number - 1]) }
            startInitialViews()
        }
        reporter.statusReport(statusReport())

        if endReason == nil {
            for await input in inputs {
                await handle(input)
                if endReason == nil && allViewsDone { endReason = .allViewsDone }
                if endReason != nil { break }
            }
        }

        reporter.stageEnding(endReason ?? .allViewsDone)
        commandTasks.cancelAll()
        for task in runTasks { task.cancel() }
        runTasks = []
        inputContinuation = nil
        continuation.finish()
        await tearDown()
        return StageOutcome(views: views, failures: views.compactMap { failures[$0.number] },
                            played: played, usedWindow: window != nil, audio: audio)
    }

    /// Output choice: a window when a display is reachable and not told otherwise, else headless; PulseAudio when a
    /// server answers, else fake sinks.
    private func openOutputs() {
        if !configuration.headless {
            do {
                let sizing: GridWindow.TileSizing = configuration.fitsScreen ? .fitScreen
                    : .fixed(width: configuration.tileWidth, height: configuration.tileHeight)
                window = try GridWindow(tileCount: views.count + configuration.spareTiles, sizing: sizing)
            } catch {
                reporter.note("no display (\(error)): playing headless")
            }
        }
        if let configured = configuration.audio {
            audio = configured
        } else {
            audio = AudioOutput.detect()
            if case .fakeSink = audio { reporter.note("no PulseAudio server reachable: audio goes to a fake sink") }
        }
    }

    /// Loads and starts the initial views: coordinated, connect and load each, then one group start (every view
    /// ready, all start at one instant); uncoordinated, each view on its own.
    private func startInitialViews() {
        let initial = views.compactMap { view in players[view.number].map { (view, $0) } }
        let sources = configuration.sources
        let reporter = self.reporter
        if let coordination = configuration.coordination {
            runTasks.append(Task {
                var loaded: [Player] = []
                for (view, player) in initial where !Task.isCancelled {
                    do {
                        try await coordination.attach(player, source: sources[view.number - 1])
                        try await player.load(sources[view.number - 1])
                        loaded.append(player)
                    } catch {
                        // The player reports its own failure as an event.
                        if !(error is PlayerError) { reporter.error("\(view): \(error)") }
                    }
                }
                guard !Task.isCancelled else { return }
                do { try await coordination.start(loaded) } catch { reporter.error("coordinated start: \(error)") }
            })
        } else {
            for (view, player) in initial {
                let source = sources[view.number - 1]
                runTasks.append(Task {
                    do {
                        try await player.load(source)
                        try await player.play()
                    } catch let error as PlayerError {
                        // Failures also arrive as `.failed` events and are reported there. A start that timed out
                        // is no failure (the pipeline may still get there), so it is said here: else the view
                        // would sit black with no word.
                        if case .timeout = error.cause { reporter.error("\(error)") }
                    } catch {
                        reporter.error("\(view): \(error)")
                    }
                })
            }
        }
    }

    /// Every view ended or failed (looping, only failures end a view for good). A failed view being retried (its
    /// HLS server is down: the observer reloads it once the server is back) is not done: with every view retried
    /// (the server down at a loop's restart), the run ended with the views the user was told would come back.
    var allViewsDone: Bool {
        views.allSatisfy {
            (!configuration.loop && ended.contains($0.number))
                || (failures[$0.number] != nil && !retryingViews.contains($0.number))
        }
    }

    /// Every view has played or failed: start-up is over.
    var allViewsStarted: Bool {
        views.allSatisfy { played.contains($0.number) || failures[$0.number] != nil }
    }

    private func handle(_ input: Input) async {
        switch input {
        case .player(let number, let event):
            await handle(event, ofView: number)
        case .command(let command):
            if startupComplete {
                dispatch(command)
            } else {
                pendingCommands.append(command)
            }
        case .tick:
            if !startupComplete && ContinuousClock.now - startInstant > Stage.startupGrace {
                completeStartup()
            }
            await refreshObserverLabels()
            reporter.statusReport(statusReport())
            if !realtimeNoteGiven, let view = players.values.first(where: { $0.realtimeRendering == false })?.view {
                realtimeNoteGiven = true
                reporter.note("\(view): real-time scheduling for video rendering not permitted (needs CAP_SYS_NICE or an rtprio limit); views may drift apart by a few ms under load")
            }
        case .deadline:
            reporter.statusReport(statusReport())
            endReason = .deadline
        case .wake:
            break
        }
    }

    private func handle(_ event: PlayerEvent, ofView number: Int) async {
        switch event {
        case .status(let status):
            statuses[number] = status
            if status.state == .playing { played.insert(number) }
            if status.state == .playing, let failure = failures.removeValue(forKey: number) {
                // A failed view plays again only when something reloaded it (the priority manager does when
                // a view's server comes back): it is no longer failed.
                retryingViews.remove(number)
                window?.setMessage(nil, tile: number - 1)
                reporter.note("\(failure.view) recovered")
                reporter.viewRecovered(failure.view)
            }
            updateTag(number)
            if !startupComplete && allViewsStarted { completeStartup() }
        case .mediaInfo(let info):
            infos[number] = info
            updateTag(number)
        case .endOfStream:
            ended.insert(number)
            if configuration.loop { restartAtEnd(number) } else { tellRoutingViewEnded(number) }
        case .failed(let error):
            let refined = await configuration.observer?.refine(error) ?? error
            // Asked now, not at the next tick: the view must count as retrying before `allViewsDone` is read.
            let retrying = await configuration.observer?.isRetrying(view: number) ?? false
            recordFailure(await SourceDiagnosis.refine(refined, source: viewSources[number]), retrying: retrying)
            tellRoutingViewEnded(number)
            if !startupComplete && allViewsStarted { completeStartup() }
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
        case .audioStreamReplaced(let reason):
            reporter.note("view \(number): new audio stream (\(reason))")
        case .notice(let text):
            reporter.note(text)
        case .warning, .seekCompleted, .rateChanged:
            break
        }
    }

    /// Start-up is over: the commands typed meanwhile are carried out, in order.
    private func completeStartup() {
        startupComplete = true
        let queued = pendingCommands
        pendingCommands = []
        for command in queued where endReason == nil { dispatch(command) }
    }
}
