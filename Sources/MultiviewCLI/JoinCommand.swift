import ArgumentParser
import Coordination
import Foundation
import GStreamer
import GroupProtocol
import GroupSession
import Multiview

/// `multiview join`: a member of a group session. Its views play their own copies of the host's item (its own
/// files, or the host's media with `--views`), on a clock that follows the host's, moved by the host's medium.
struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a group session opened by multiview host: play along, in sync, on this process's views.",
        discussion: """
        MEDIA are this member's own copies of the item; or --views 2,3 plays the host's views 2 and 3 (their URIs). \
        On stdin: the commands of play --coordinated (play/pause/seek/rate act on the whole group); q = leave. \
        A wrong or missing token is refused (exit 3). If the host goes away the views keep playing on their last clock, \
        and rejoin when a host answers again at ADDR:PORT with the same token. The host's end ends this process too.
        """
    )

    @Argument(help: "The host's address, ADDR:PORT, as printed by multiview host.")
    var address: String

    @Option(name: .long, help: "The session token printed by multiview host.")
    var token: String?

    @Flag(name: .long, help: "No window: video to fake sinks.")
    var headless = false

    @OptionGroup
    var playOptions: PlayOptions

    @Option(name: .long, help: "Play the host's views N,… (their URIs) instead of MEDIA.")
    var views: String?

    @Option(name: .long, help: "A name for this member in the host's log.")
    var name: String = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "member"

    @Option(name: .long, help: "Write every frame each view rendered on the shared clock to this JSON file at the end (headless).")
    var renderLog: String?

    /// Scripts/bench-network's baseline row only: join on the first synchronised exchange, as before settling.
    @Flag(name: .long, help: ArgumentHelp("Join the group as soon as the net clock first synchronised, without waiting for it to settle (bench baseline).", visibility: .hidden))
    var joinUnsettled = false

    /// Scripts/bench-network only: the net clock's true error over time (`ClockErrorLog`).
    @Option(name: .long, help: ArgumentHelp("Write the net clock's readings against this machine's monotonic clock (every 20 ms) to this CSV file at the end (bench).", visibility: .hidden))
    var clockLog: String?

    /// Scripts/bench-network's before row only: the net clock tuning by name (`NetClockTuning.named`).
    @Option(name: .long, help: ArgumentHelp("Net clock tuning: standard, previous or gstreamer (bench).", visibility: .hidden))
    var netClockTuning: String = "standard"

    /// Scripts/bench-network's before row only: the audio follower reads libpulse's smoothed time
    /// (`AudioPlayoutTiming.libpulse`).
    @Option(name: .long, help: ArgumentHelp("Audio playout timing: server or libpulse (bench).", visibility: .hidden))
    var audioTiming: String = AudioPlayoutTiming.server.rawValue

    @Argument(help: "Media files or URIs (this member's copies of the host's item).")
    var media: [String] = []

    func run() async throws {
        let reporter = TerminalReporter()
        let address: SessionAddress
        let duration: Double?
        do {
            address = try SessionAddress.parse(self.address, option: "join")
            duration = try playOptions.checkedDuration()
        } catch {
            reporter.error("\(error)")
            throw ExitCode(64)
        }
        guard let clockTuning = NetClockTuning.named[netClockTuning] else {
            reporter.error("join: --net-clock-tuning \(netClockTuning): not one of \(NetClockTuning.named.keys.sorted().joined(separator: ", "))")
            throw ExitCode(64)
        }
        guard let audioPlayoutTiming = AudioPlayoutTiming(rawValue: audioTiming) else {
            reporter.error("join: --audio-timing \(audioTiming): not one of \(AudioPlayoutTiming.allCases.map(\.rawValue).joined(separator: ", "))")
            throw ExitCode(64)
        }
        guard let token, !token.isEmpty else {
            reporter.error("join: a session token is needed (--token T, as printed by multiview host)")
            throw ExitCode(3)
        }
        guard GStreamer.ensureInitialized() else {
            reporter.error("GStreamer could not be initialised")
            throw ExitCode(2)
        }
        let session: MemberSession
        do {
            session = try await MemberSession.join(host: address.host, port: address.port, token: token,
                                                   name: Self.plainName(name), clockTuning: clockTuning,
                                                   log: { reporter.line($0) })
        } catch GroupLinkError.refused(.badToken, _) {
            reporter.error("join \(self.address): the host refused the session token")
            throw ExitCode(3)
        } catch {
            reporter.error("join \(self.address): \(error)")
            throw ExitCode(2)
        }
        let link = await session.current
        let welcome = link.welcome
        guard let item = welcome.items.first else {
            reporter.error("join \(self.address): the host plays no item")
            await session.leave()
            throw ExitCode(2)
        }
        let sources: [MediaSource]
        do { sources = try chooseSources(welcome) } catch {
            reporter.error("\(error)")
            await session.leave()
            throw ExitCode(64)
        }
        if let netClock = link.netClock {
            reporter.line("group session: following the host's clock at \(netClock.address):\(netClock.port) (\(SessionClock.statusLabel(netClock)))")
        }
        reporter.line("group session: joined \(self.address) as \(welcome.memberID), item \(item), start margin \(welcome.startMarginMs) ms")

        let (signals, signalContinuation) = AsyncStream<Void>.makeStream()
        ShutdownSignals.install(reporter: reporter) { signalContinuation.yield() }
        let settled = !joinUnsettled
        let networked = NetworkCoordinatedStage(medium: link.medium, itemIdentifier: item) {
            if settled { await link.waitUntilClockSettled() }
        }
        await session.attach(networked)
        // Read at each sample: after a host comes back, its clock is the new link's (`move(to:)`).
        let clockErrors = clockLog.flatMap { path in link.netClock.map { _ in ClockErrorLog(clock: { networked.medium.clock }, path: path) } }
        let reporting = GroupEventReporting(networked, item: item, clock: { networked.medium.clock }, renderLog: renderLog != nil, reporter: reporter,
                                            coordinatorFor: { networked.coordination(for: $0)?.coordinator },
                                            labelSuffix: { session.clockLabel }, attached: { clockErrors?.follow($0) })
        var configuration = StageConfiguration(sources: sources, headless: headless, duration: duration,
                                               audio: playOptions.audio)
        configuration.teardown = .leaveToProcessExit
        configuration.audioPlayoutTiming = audioPlayoutTiming
        configuration.coordination = reporting
        let stage = Stage(configuration: configuration, reporter: reporter)
        if let duration { reporter.quitRequested(after: duration) }
        let signalWatch = Task { for await _ in signals { await stage.endNow() } }
        let (sessionCommands, sessionContinuation) = AsyncStream<StageCommand>.makeStream()
        let noticeWatch = Task {
            for await notice in session.notices {
                switch notice {
                case .ended(let reason):
                    reporter.line("group session: \(reason)")
                    sessionContinuation.yield(.quit)
                case .hostLost(let why):
                    reporter.line("group session: host lost (\(why)); the views keep playing on their last clock; rejoining when a host answers at \(self.address)")
                case .rejoined(let memberID):
                    reporter.line("group session: rejoined \(self.address) as \(memberID)")
                case .participants:
                    break   // each view's event line says it (GroupEventReporting)
                }
            }
        }
        let outcome = await stage.run(commands: .merging([StdinCommands.stream(reporter: reporter), sessionCommands]))
        signalWatch.cancel()
        noticeWatch.cancel()
        await session.leave()
        if let renderLog { reporting.writeRenderLog(to: renderLog) }
        if let clockErrors, let clockLog {
            do { try clockErrors.finish() } catch { reporter.error("--clock-log \(clockLog): \(error)") }
        }
        reporter.printFinalLines(outcome)
        reporter.exitNow(ShutdownSignals.requestedExitCode ?? outcome.exitCode)
    }

    /// MEDIA, or the host's views named by `--views`.
    private func chooseSources(_ welcome: GroupMessage.Welcome) throws -> [MediaSource] {
        guard let views else {
            guard !media.isEmpty else {
                throw StageInputError.malformed(input: "join", expected: "MEDIA… or --views N,… (the host has views 1…\(welcome.media.count))")
            }
            return media.map(MediaSource.init)
        }
        return try views.split(separator: ",").map { part in
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)),
                  let offered = welcome.media.first(where: { $0.view == n }) else {
                throw StageInputError.malformed(input: "--views \(views)", expected: "view numbers 1…\(welcome.media.count), comma-separated")
            }
            return MediaSource(offered.uri)
        }
    }

    /// The host accepts plain names only (letters, digits, . _ -).
    static func plainName(_ name: String) -> String {
        let kept = String(name.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "._-".unicodeScalars.contains($0)) }.prefix(64))
        return kept.isEmpty ? "member" : kept
    }
}
