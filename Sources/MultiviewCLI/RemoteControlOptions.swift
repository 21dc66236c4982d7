import ArgumentParser
import Coordination
import Foundation
import Multiview
import RemoteControl

/// `play` options for the MPRIS2 remote control (now playing on the D-Bus session bus, playerctl, media keys).
struct RemoteControlOptions: ParsableArguments {
    @Flag(name: .long, help: "Do not register on the D-Bus session bus as an MPRIS2 player.")
    var noMpris = false

    @Option(name: .long, help: "Seconds the skip keys (MPRIS Next/Previous) move; a Seek carrying an offset uses that offset.")
    var skipInterval: Double = 10

    func validate() throws {
        do { _ = try StageLimits.duration(skipInterval, input: "--skip-interval \(skipInterval)") } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Registers `org.mpris.MediaPlayer2.multiview` (or `….instance<pid>`) unless disabled. A missing session bus
    /// is one note, not an error: playing goes on without remote control.
    func start(coordination: CoordinatedStage?, commands: AsyncStream<StageCommand>.Continuation,
               reporter: TerminalReporter) async -> RemoteControl? {
        if noMpris { return nil }
        let server: MPRISServer
        do {
            server = try await MPRISServer.start()
        } catch {
            reporter.note("MPRIS2 remote control off (\(error))")
            return nil
        }
        reporter.note("MPRIS2: \(server.busName) on the session bus")
        let remote = RemoteControl(
            server: server, skipInterval: skipInterval,
            coordinatorLookup: { player in coordination?.coordination(for: player)?.coordinator },
            onQuit: { commands.yield(.quit) },
            onVolume: { commands.yield(.setVolume(view: nil, percent: ($0 * 100).rounded())) },
            note: { reporter.note($0) })
        await remote.start()
        return remote
    }
}

typealias RemoteControlHandle = RemoteControl

extension AsyncStream where Element == StageCommand {
    /// One stream of the commands of all (stdin, the remote's quit, signals). The forwarding tasks end with it.
    static func merging(_ streams: [AsyncStream<StageCommand>]) -> AsyncStream<StageCommand> {
        AsyncStream { continuation in
            let tasks = streams.map { stream in Task { for await c in stream { continuation.yield(c) } } }
            continuation.onTermination = { _ in tasks.forEach { $0.cancel() } }
        }
    }
}
