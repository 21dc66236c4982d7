import Coordination
import Foundation
import GStreamer
import Multiview

/// The set-up every "PulseAudio goes away under playing views" test shares: a PulseAudio daemon of the test's own
/// (`PrivatePulseDaemon`, so the shared test daemon is never stopped), started, with `PULSE_SERVER` pointed at it
/// until `tearDown()`, and views whose audio goes there, each one's audio-output losses and returns logged in
/// `audioEvents` (true: lost, false: back).
///
/// Threading: made, used and torn down by one test method's task; the event readers only touch `audioEvents`
/// and the status logs (actors).
final class PulseKillFixture {
    let daemon: PrivatePulseDaemon
    let audioEvents = AudioEvents()
    private let previousServer: String?
    private var readers: [Task<Void, Never>] = []

    init() async throws {
        daemon = try PrivatePulseDaemon()
        try await daemon.start()
        previousServer = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", daemon.server, 1)
    }

    /// View `number`, named `file`: video to a fake sink, audio to the daemon (through `PULSE_SERVER`). Not loaded.
    func player(number: Int, file: String) async throws -> Player {
        let player = try Player(configuration: PlayerConfiguration(
            view: ViewIdentity(number: number, name: file), video: .fakeSink, audio: .pulse(device: nil)))
        let events = await player.events()
        let log = audioEvents
        readers.append(Task { for await e in events { if case .audioOutput(let lost, _) = e { await log.add(lost) } } })
        return player
    }

    /// View `number` playing `file` on its own (uncoordinated), its statuses logged in order (for failure
    /// messages). Loaded and started, not waited for.
    func playingView(number: Int = 1, file: String) async throws -> (Player, StatusLog) {
        let player = try await self.player(number: number, file: file)
        let log = StatusLog()
        let events = await player.events()
        readers.append(Task { for await event in events { if case .status(let s) = event { await log.add("\(s)") } } })
        try await player.load(MediaSource(RoutingMedia.path(file)))
        try await player.playLocally()
        return (player, log)
    }

    /// Views `files` (numbered from 1) coordinated on one in-process medium as one item ("event"), loaded.
    func coordinatedViews(_ files: [String]) async throws -> [PlayerCoordination] {
        let medium = PlaybackCoordinationMedium()
        var views: [PlayerCoordination] = []
        for (index, file) in files.enumerated() {
            let source = MediaSource(RoutingMedia.path(file))
            let player = try await player(number: index + 1, file: file)
            let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: "event")
            try await coordination.coordinate(using: medium)
            try await player.load(source)
            views.append(coordination)
        }
        return views
    }

    /// Stops reading events, gives `PULSE_SERVER` back and stops the daemon (call it from a `defer`).
    func tearDown() {
        readers.forEach { $0.cancel() }
        if let previousServer { setenv("PULSE_SERVER", previousServer, 1) } else { unsetenv("PULSE_SERVER") }
        daemon.stop()
    }
}

/// A view's audio-output events in order: true when it lost its output, false when it got it back.
actor AudioEvents {
    private(set) var values: [Bool] = []
    func add(_ v: Bool) { values.append(v) }
}
