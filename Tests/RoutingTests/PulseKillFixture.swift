import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport

/// The set-up every "PulseAudio goes away under playing views" test shares: a PulseAudio daemon of the test's own
/// (`PrivatePulseDaemon`, so the shared test daemon is never stopped), started, with `PULSE_SERVER` pointed at it
/// until `tearDown()`, and views whose audio goes there, each one's audio-output losses and returns logged in
/// `audioEvents` (true: lost, false: back).
///
/// Tear-down order matters: every player the fixture made is stopped (awaited) before `PULSE_SERVER` is given back
/// and the daemon stopped. pulsesink shares one PulseAudio connection per client name in a process; a player still
/// open on this daemon's connection when it is gone makes every later pulsesink of the process reuse that dead
/// connection ("Configured audiosink … is not working" at the next test's first play, CI stop 22, when the players
/// were stopped in a `Task` the test did not wait for). Use `withPulseKillFixture`, which tears down on every exit.
///
/// Threading: made, used and torn down by one test method's task; the event readers only touch `audioEvents`
/// and the status logs (actors).
final class PulseKillFixture {
    let daemon: PrivatePulseDaemon
    let audioEvents = AudioEvents()
    private let previousServer: String?
    private var readers: [Task<Void, Never>] = []
    /// Every player made here, stopped at `tearDown()`.
    private var players: [Player] = []

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
        players.append(player)
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

    /// Views `files` coordinated as `coordinatedViews` makes them, started by the group's play; returns once every
    /// view is PLAYING past `seconds`, throws when the group has not started so within 15 s.
    func playingGroup(_ files: [String], past seconds: Double = 1.0) async throws -> [PlayerCoordination] {
        let views = try await coordinatedViews(files)
        let players = views.map(\.player)
        try await players[0].play()   // the group's play
        let started = await eventually(timeout: .seconds(15)) { await allPlaying(players, past: seconds) }
        guard started else {
            var states: [PlayerStatus] = []
            for p in players { states.append(await p.currentStatus) }
            throw FixtureError("the group did not start: \(states)")
        }
        return views
    }

    /// Stops the fixture's players (their pulsesinks close their connection to this daemon), stops reading
    /// events, gives `PULSE_SERVER` back and stops the daemon.
    func tearDown() async {
        for player in players { await player.stop() }
        players = []
        readers.forEach { $0.cancel() }
        if let previousServer { setenv("PULSE_SERVER", previousServer, 1) } else { unsetenv("PULSE_SERVER") }
        daemon.stop()
    }
}

/// Runs `body` with a new `PulseKillFixture` and tears it down (awaited) however `body` ends.
func withPulseKillFixture(_ body: (PulseKillFixture) async throws -> Void) async throws {
    let fixture = try await PulseKillFixture()
    do {
        try await body(fixture)
    } catch {
        await fixture.tearDown()
        throw error
    }
    await fixture.tearDown()
}

/// A view's audio-output events in order: true when it lost its output, false when it got it back.
actor AudioEvents {
    private(set) var values: [Bool] = []
    func add(_ v: Bool) { values.append(v) }
}

/// Whether every one of `players` is PLAYING past `seconds` of media.
func allPlaying(_ players: [Player], past seconds: Double) async -> Bool {
    for p in players {
        guard await p.currentStatus.state == .playing, (await p.position?.seconds ?? 0) > seconds else { return false }
    }
    return true
}

/// A set-up step of the fixture that did not happen.
struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
