import ArgumentParser
import Coordination
import Foundation
import GStreamer
import GroupProtocol
import GroupSession
import Multiview

/// `multiview host`: plays its views coordinated, as `play --coordinated`, and opens a group session other
/// processes and hosts join (`multiview join`). Its in-process medium stays the one authority for the group.
struct Host: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play coordinated views and open a group session that other processes and hosts join.",
        discussion: """
        Prints the address and the session token members need: multiview join ADDR:PORT --token T. \
        On stdin: the commands of play --coordinated (they act on the whole group, members included); \
        end = end the session for everyone and quit; q = quit (members keep playing on their last clock).
        """
    )

    @Option(name: .long, help: "Where members connect, ADDR:PORT (port 0: any free port).")
    var listen: String = "127.0.0.1:7654"

    @Flag(name: .long, help: "No window: video to fake sinks.")
    var headless = false

    @OptionGroup
    var playOptions: PlayOptions

    @Option(name: .long, help: "Item identifier of the group (members' views must play the same item).")
    var itemId: String = "multiview-event"

    @Option(name: .long, help: "Session token (default: 128 random bits); for scripts that start host and members.")
    var token: String?

    @Option(name: .long, help: "Write every frame each view rendered on the shared clock to this JSON file at the end (headless).")
    var renderLog: String?

    @Option(name: .long, help: "Seconds a member may stay silent before the host drops it and the group goes on without it (0.5 to 600).")
    var dropAfter: Double = 3

    @Argument(help: "Media files or URIs.")
    var media: [String] = []

    func validate() throws {
        if media.isEmpty { throw ValidationError("give at least one media file or URI") }
        // Also refuses nan and inf: neither is inside the range.
        if !(0.5...600).contains(dropAfter) {
            throw ValidationError("--drop-after \(dropAfter): must be between 0.5 and 600 seconds")
        }
    }

    func run() async throws {
        let reporter = TerminalReporter()
        let address: SessionAddress
        let duration: Double?
        do {
            address = try SessionAddress.parse(listen, option: "--listen")
            duration = try playOptions.checkedDuration()
        } catch {
            reporter.error("\(error)")
            throw ExitCode(64)
        }
        guard GStreamer.ensureInitialized() else {
            reporter.error("GStreamer could not be initialised")
            throw ExitCode(2)
        }
        let (signals, signalContinuation) = AsyncStream<Void>.makeStream()
        ShutdownSignals.install(reporter: reporter) { signalContinuation.yield() }

        let medium = PlaybackCoordinationMedium(name: "session host")
        let coordinated = CoordinatedStage(medium: medium, itemIdentifier: itemId)
        let reporting = GroupEventReporting(coordinated, item: itemId, clock: { medium.clock }, renderLog: renderLog != nil,
                                            reporter: reporter,
                                            coordinatorFor: { coordinated.coordination(for: $0)?.coordinator })
        let sources = media.map(MediaSource.init)
        var configuration = StageConfiguration(sources: sources, headless: headless, duration: duration,
                                               audio: playOptions.audio)
        configuration.teardown = .leaveToProcessExit
        configuration.coordination = reporting

        // The group's clock for members: the medium's own clock, served over UDP beside the control channel.
        let provider: NetTimeProvider
        do { provider = try SessionClock.serve(medium.clock, address: address.host) } catch {
            reporter.error("--listen \(listen): cannot serve the clock there: \(error)")
            throw ExitCode(2)
        }
        var hostConfiguration = SessionHostConfiguration(
            token: token ?? SessionToken.generate(), items: [itemId],
            media: sources.enumerated().map { WireViewMedia(view: $0.offset + 1, uri: $0.element.uri) },
            clock: SessionClock.announcement(of: provider))
        hostConfiguration.dropAfter = .milliseconds(Int64((dropAfter * 1000).rounded()))
        let session = SessionHost(medium: medium, configuration: hostConfiguration, log: { reporter.line($0) })
        let port: Int
        do {
            port = try await session.start(host: address.host, port: address.port)
        } catch {
            reporter.error("--listen \(listen): cannot listen there: \(error)")
            throw ExitCode(2)
        }
        reporter.line("group session: listening on \(address.host):\(port), token \(session.configuration.token), net clock on UDP port \(provider.port)")
        // Bound to every interface: members use any address of this machine they can reach.
        let joinHost = ["0.0.0.0", "::"].contains(address.host) ? "ADDR" : address.host
        reporter.line("group session: members join with: multiview join \(joinHost):\(port) --token \(session.configuration.token)")

        let stage = Stage(configuration: configuration, reporter: reporter)
        if let duration { reporter.quitRequested(after: duration) }
        let signalWatch = Task { for await _ in signals { await stage.endNow() } }
        let (ending, endContinuation) = AsyncStream<StageCommand>.makeStream()
        let stdin = SessionStdin.stream(reporter: reporter) {
            Task {
                await session.end()
                reporter.line("group session: ended for every member")
                endContinuation.yield(.quit)
            }
        }
        let outcome = await stage.run(commands: .merging([stdin, ending]))
        withExtendedLifetime(provider) {}
        signalWatch.cancel()
        if let renderLog { reporting.writeRenderLog(to: renderLog) }
        reporter.printFinalLines(outcome)
        reporter.exitNow(ShutdownSignals.requestedExitCode ?? outcome.exitCode)
    }
}
