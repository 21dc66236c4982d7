import ArgumentParser
import Coordination
import Foundation
import GStreamer
import Multiview
import TrickPlay

struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play several files or URIs side by side: one grid window, or headless.",
        // One line per paragraph (a trailing backslash continues it): the parser wraps them to the terminal's width;
        // hard breaks inside a sentence made it wrap mid-sentence.
        discussion: """
        Keys in the window: space = play/pause all, ←/→ = −/+10 s, f = fullscreen, m = mute all, / and * = volume −/+10, \
        ? or h = help, q or Esc = quit, 1-9 = cycle that view's priority (low → default → high) on a shared link.

        On stdin: \(StageCommand.summary). Type help while playing for every key and command.

        With --coordinated the commands act on the group (from whichever view), `r N` replays the last seconds of \
        view N at 2× and rejoins, `add URI` adds a view that joins in sync.

        A number out of range is refused with one line naming it and the allowed range (rates 1/8…8, volumes \
        0…150 %). q, --duration, SIGINT and SIGTERM end the process within 2 s (a second SIGINT at once).

        Exit status: 0 when every view played; 1 when any view failed (one line per failed view on stderr); \
        130 / 143 after SIGINT / SIGTERM; 64 for an option out of range.
        """
    )

    @Flag(name: .long, help: "No window: video to fake sinks, audio to PulseAudio if reachable (automatic without a display).")
    var headless = false

    @OptionGroup
    var playOptions: PlayOptions

    @Option(name: .long, help: "Tile size in the window, WIDTHxHEIGHT (16…7680 x 16…4320). Default: tiles fill the screen.")
    var tile: String?

    @Flag(name: .long, help: "Coordinate the views: one clock, play/pause/seek/rate act on the group at one instant.")
    var coordinated = false

    @Option(name: .long, help: "Item identifier shared by the coordinated views (they are angles of one event).")
    var itemId: String = "multiview-event"

    @Option(name: .long, help: "Empty tiles kept in the window for views added with 'add URI' (0…16).")
    var spareTiles: Int = 0

    @Flag(name: .long, help: "Start each view again from the beginning at its end (coordinated: the group, together).")
    var loop = false

    @Option(name: .long, help: ArgumentHelp("With --headless: write every rendered frame's render time on the shared clock to DIR/render-times.log while playing (multiview sync-log-skew DIR gives the skew between views).", valueName: "DIR"))
    var syncLog: String?

    @OptionGroup(title: "HLS views on a shared link")
    var priorityOptions: PriorityOptions
    @OptionGroup(title: "Audio routes and the external display")
    var routing: RoutingOptions
    @OptionGroup(title: "Remote control (MPRIS2)")
    var remoteControl: RemoteControlOptions

    @OptionGroup(title: "Languages")
    var languages: LanguageOptions

    @Argument(help: "Media files, folders (their media, by name), .m3u playlists (their entries) or URIs (file://, http://…).")
    var media: [String] = []

    func validate() throws {
        // `multiview` alone (as `mpv` alone): the help, not "Missing expected argument" above it.
        if media.isEmpty { throw CleanExit.helpRequest(MultiviewCommand.self) }
    }

    /// Every number of the command line against its range (`StageLimits`): the first problem as one line, or nil.
    /// `viewCount`: the views once folders and playlists are expanded (default: one per argument).
    func inputProblem(viewCount: Int? = nil) -> String? {
        do {
            _ = try playOptions.checkedDuration()
            if let tile { do { _ = try StageLimits.tile(tile) } catch { return "--tile \(error)" } }
            _ = try StageLimits.spareTileCount(spareTiles, input: "--spare-tiles \(spareTiles)")
            if let problem = languages.problem() { return problem }
            if let problem = PlaySyncLog.problem(syncLog: syncLog, headless: headless) { return problem }
            // The priority engineer's options parse `N=level`; which N exist is known here.
            for (number, level) in try priorityOptions.parsedPriorities().sorted(by: { $0.key < $1.key }) {
                _ = try StageLimits.view(number, count: viewCount ?? media.count, input: "--priority \(number)=\(level.rawValue)")
            }
        } catch {
            return "\(error)"
        }
        return nil
    }

    func run() async throws {
        let reporter = TerminalReporter()
        // Folders and plain playlists become their entries (one view each); an HLS playlist stays one view.
        let media: [String]
        do {
            let expanded = try PlaylistExpansion.expand(self.media)
            for note in expanded.notes { reporter.note(note) }
            media = expanded.media
        } catch {
            reporter.error("\(error)")
            throw ExitCode(64)
        }
        if let problem = inputProblem(viewCount: media.count) {
            reporter.error(problem)
            throw ExitCode(64)
        }
        guard GStreamer.ensureInitialized() else {
            reporter.error("GStreamer could not be initialised")
            throw ExitCode(2)
        }
        let (signals, signalContinuation) = AsyncStream<Void>.makeStream()
        ShutdownSignals.install(reporter: reporter) { signalContinuation.yield() }

        let (width, height) = (tile.flatMap { try? StageLimits.tile($0) }) ?? (480, 270)
        var configuration = StageConfiguration(
            sources: media.map(MediaSource.init), headless: headless, duration: playOptions.durationSeconds,
            audio: playOptions.audio, tileWidth: width, tileHeight: height)
        configuration.fitsScreen = tile == nil
        configuration.teardown = .leaveToProcessExit
        configuration.loop = loop
        var coordinatedStage: CoordinatedStage?
        if coordinated {
            coordinatedStage = CoordinatedStage(itemIdentifier: itemId)
            configuration.coordination = coordinatedStage
            configuration.spareTiles = spareTiles
        }
        configuration.observer = try priorityOptions.makeObserver(media: media)
        configuration.trickPlay = TrickPlayStage(note: { reporter.note($0) })   // ff N, rew N, preview N
        let arbiter = await routing.makeArbiter(reporter: reporter, viewCount: media.count)
        if let arbiter {
            configuration.routing = arbiter
            // Without PulseAudio the arbiter has said so once; the views play with silent audio sinks.
            if await !arbiter.hasPulseAudio && !playOptions.noAudio { configuration.audio = .fakeSink }
        }
        let (remoteCommands, remoteContinuation) = AsyncStream<StageCommand>.makeStream()
        let remote = await remoteControl.start(coordination: coordinatedStage, commands: remoteContinuation,
                                               reporter: reporter)
        configuration.playerCreated = Play.playerHook(languages: languages.preferences, remote: remote,
                                                      reporter: reporter)
        var recording: PlaySyncLog?
        if let syncLog {
            do {
                recording = try PlaySyncLog(directory: syncLog, coordinatedItem: coordinated ? itemId : nil)
            } catch {
                reporter.error("--sync-log \(syncLog): \(error.localizedDescription)")
                throw ExitCode(64)
            }
            configuration.playerCreated = recording?.hook(configuration.playerCreated, reporter: reporter)
        }
        let stage = Stage(configuration: configuration, reporter: reporter)
        // Started just before the stage's own deadline, so it never ends a shutdown that is on time.
        if let seconds = playOptions.durationSeconds { reporter.quitRequested(after: seconds) }
        // The first SIGINT/SIGTERM ends the stage at once (even while it starts); cancelled when the run is over.
        let signalWatch = Task { for await _ in signals { await stage.endNow() } }
        let outcome = await stage.run(commands: .merging([StdinCommands.stream(reporter: reporter), remoteCommands]))
        signalWatch.cancel()
        recording?.finish(reporter: reporter)
        reporter.watchdog.phase("closing the MPRIS connection")
        await remote?.shutdown()
        reporter.watchdog.phase("giving the audio routes back")
        await arbiter?.shutdown()
        reporter.printFinalLines(outcome)
        // The views are left to the process's exit (StageTeardown.leaveToProcessExit): end it here.
        reporter.exitNow(ShutdownSignals.requestedExitCode ?? outcome.exitCode)
    }
}
