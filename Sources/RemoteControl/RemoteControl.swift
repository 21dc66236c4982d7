import Coordination
import Foundation
import GStreamer
import Multiview

/// Ties an `MPRISServer` to the views: publishes the focused view's now-playing state and turns remote commands
/// into transport calls on it. Coordinated, the focused view's transport goes through its coordinator, so a
/// command acts on the whole group at one instant (exactly like the window keys); uncoordinated, it acts on the
/// focused view only (view 1 unless `focus(view:)` says otherwise).
///
/// Publishing follows the MPRIS rule of "no timer": PropertiesChanged only on item change, state change and rate
/// change; `Seeked` on jumps (the view's own seek, or the group's time jump); cleared when the item ends.
///
/// Threading: the actor owns the focus, the views list and the bookkeeping; player and coordinator events
/// arrive through tasks that hand them to it in order; the server's commands arrive on one task.
public actor RemoteControl {
    public let server: MPRISServer
    /// The preferred skip interval (seconds) for `Next`/`Previous` (the skip keys). `Seek` uses its own offset.
    public let skipInterval: Double
    private let coordinatorLookup: @Sendable (Player) -> PlaybackCoordinator?
    private let onQuit: @Sendable () -> Void
    /// Applies a `Volume` the remote set to every view (linear, already within `volumeRange`).
    private let onVolume: @Sendable (Double) -> Void
    private let note: @Sendable (String) -> Void

    private var players: [Int: Player] = [:]
    private var focusedNumber = 1
    private var focused: Player?
    private var watchers: [Task<Void, Never>] = []
    private var coordinatorWatched = false
    private var itemCounter = 0
    private var ended = false
    /// Set by `Stop`: the view is paused at 0 and reported Stopped until the next play.
    private var stoppedByRemote = false
    private var stopInProgress = false
    private var commandTask: Task<Void, Never>?

    public init(server: MPRISServer, skipInterval: Double = 10,
                coordinatorLookup: @escaping @Sendable (Player) -> PlaybackCoordinator? = { _ in nil },
                onQuit: @escaping @Sendable () -> Void = {}, onVolume: @escaping @Sendable (Double) -> Void = { _ in },
                note: @escaping @Sendable (String) -> Void = { _ in }) {
        self.server = server
        self.skipInterval = skipInterval
        self.coordinatorLookup = coordinatorLookup
        self.onQuit = onQuit
        self.onVolume = onVolume
        self.note = note
    }

    /// Starts taking commands from the server.
    public func start() {
        guard commandTask == nil else { return }
        let commands = server.commands
        commandTask = Task { [weak self] in
            for await command in commands {
                guard let self else { return }
                await self.perform(command)
            }
        }
    }

    /// Stops taking commands and following views, and unpublishes the server.
    public func shutdown() async {
        commandTask?.cancel()
        for watcher in watchers { watcher.cancel() }
        watchers = []
        await server.stop()
    }

    /// A view exists (the stage created it): listed in the metadata; followed when it is the focused one.
    public func add(_ player: Player) async {
        players[player.view.number] = player
        if player.view.number == focusedNumber && focused !== player {
            await follow(player)
        } else if !ended {
            await publishTrack(refresh: false)
        }
    }

    /// Focuses view `number` (uncoordinated commands act on it; it is what "now playing" describes).
    public func focus(view number: Int) async {
        focusedNumber = number
        if let player = players[number] { await follow(player) }
    }

    public var focusedView: Int { focusedNumber }

    // MARK: Following the focused view

    private func follow(_ player: Player) async {
        for watcher in watchers { watcher.cancel() }
        watchers = []
        coordinatorWatched = false
        focused = player
        ended = false
        itemCounter += 1
        server.setPositionReader { [player] in player.queryPosition() }
        let events = await player.events()
        watchers.append(Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.observe(event, from: player)
            }
        })
        await publishTrack(refresh: true)
    }

    private func watchCoordinator(of player: Player) {
        guard !coordinatorWatched, let coordinator = coordinatorLookup(player) else { return }
        coordinatorWatched = true
        watchers.append(Task { [weak self] in
            let events = await coordinator.events()
            for await event in events {
                guard let self else { return }
                await self.observe(event, from: player)
            }
        })
    }

    private func observe(_ event: PlayerEvent, from player: Player) async {
        guard player === focused else { return }
        watchCoordinator(of: player)
        switch event {
        case .status:
            // Events reach this actor a little after they happened: map the player's state as it is now, so a
            // stale "playing" queued before a Stop or Pause cannot overwrite what the command did.
            let status = await player.currentStatus
            if ended && status.state == .playing { ended = false; await publishTrack(refresh: true) }
            // Playing again (from the keys, stdin or the group) ends a remote Stop; not while the Stop itself runs.
            if status.state == .playing && status.waitingToPlay == nil && !stopInProgress { stoppedByRemote = false }
            let mapped: NowPlaying.Status?
            switch (status.state, status.waitingToPlay) {
            case (.playing, nil): mapped = .playing
            case (.paused, nil): mapped = stoppedByRemote ? .stopped : .paused
            case (.stopped, _): mapped = .stopped
            default: mapped = nil // buffering, seeking, waiting for the group: keep what remotes were told
            }
            if let mapped, !ended { server.update { $0.status = mapped } }
            if status.state == .paused || status.state == .playing, server.nowPlaying.track?.length == nil {
                await publishTrack(refresh: false)
            }
        case .rateChanged(let rate):
            if rate > 0 { server.update { $0.rate = rate } }
        case .seekCompleted(let position):
            // Uncoordinated jumps (coordinated ones come from the coordinator's timeJumped).
            if coordinatorLookup(player) == nil { server.emitSeeked(position) }
        case .endOfStream:
            ended = true
            server.update { state in
                state.track = nil
                state.status = .stopped
                state.canSeek = false; state.canPause = false; state.canGoNext = false; state.canGoPrevious = false
                state.canPlay = true
            }
        case .failed:
            ended = true
            server.update { $0 = NowPlaying() }
        case .mediaInfo, .interruption, .warning, .notice, .audioOutput, .audioStreamReplaced:
            break
        }
    }

    private func observe(_ event: CoordinatorEvent, from player: Player) async {
        guard player === focused else { return }
        switch event {
        case .timeJumped(let time, _, _):
            server.emitSeeked(time)
        case .rateChanged(let rate, _, _):
            if rate > 0 { server.update { $0.rate = rate } }
        default:
            break
        }
    }

    /// Publishes the focused item: title (tag, else file name), length, track id, every view's name, Can*.
    private func publishTrack(refresh: Bool) async {
        guard let player = focused else { return }
        let source = await player.loadedSource
        let duration = await player.duration
        let names = players.keys.sorted().compactMap { players[$0]?.view.name }
        let trackID = "/org/mpris/MediaPlayer2/multiview/item\(itemCounter)"
        let live = duration == nil && source?.path == nil
        server.update { state in
            var track = state.track ?? NowPlaying.Track(trackID: trackID, title: player.view.name, length: nil,
                                                         url: source?.uri, views: names)
            if refresh { track.trackID = trackID; track.title = state.track?.trackID == trackID ? track.title : player.view.name }
            track.length = duration ?? track.length
            track.url = source?.uri ?? track.url
            track.views = names
            state.track = track
            state.canPlay = true
            state.canPause = true
            // A live stream cannot seek: the commands stay, disabled.
            state.canSeek = !live
            state.canGoNext = !live
            state.canGoPrevious = !live
        }
        if refresh, let uri = source?.uri {
            // The title tag needs a discovery (its own pipeline): off the actor, then one more update.
            Task.detached { [server] in
                guard let title = (try? MediaInfo.discover(uri: uri, timeout: .seconds(5)))?.title, !title.isEmpty
                else { return }
                server.update { state in
                    if state.track?.trackID == trackID { state.track?.title = title }
                }
            }
        }
    }

    // MARK: Commands

    /// The volumes a remote may set, linear: the stage's `volume` range (0 … 150 %).
    public static let volumeRange: ClosedRange<Double> = 0...1.5

    private func perform(_ command: RemoteCommand) async {
        if case .volume(let asked) = command {
            // The whole group's volume (every view), published back as applied.
            let volume = min(max(asked, Self.volumeRange.lowerBound), Self.volumeRange.upperBound)
            onVolume(volume)
            server.update { $0.volume = volume }
            return
        }
        guard let player = focused else {
            note("MPRIS \(command): no view to act on yet")
            return
        }
        do {
            switch command {
            case .play:
                try await play(player)
            case .pause:
                try await player.pause()
            case .playPause:
                if server.nowPlaying.status == .playing { try await player.pause() } else { try await play(player) }
            case .stop:
                stoppedByRemote = true
                stopInProgress = true
                defer { stopInProgress = false }
                try await player.pause()
                try await player.seek(to: .zero)
                server.update { $0.status = .stopped }
            case .next:
                try await player.seek(by: skipInterval)
            case .previous:
                try await player.seek(by: -skipInterval)
            case .seek(let offset):
                try await player.seek(by: Double(offset) / 1_000_000)
            case .setPosition(let trackID, let microseconds):
                guard trackID == server.nowPlaying.track?.trackID, microseconds >= 0 else { return }
                if let length = server.nowPlaying.track?.length, microseconds > Int64(length.nanoseconds / 1000) { return }
                try await player.seek(to: ClockTime(nanoseconds: UInt64(microseconds) * 1000))
            case .rate(let rate):
                if rate == 0 {
                    try await player.pause()
                } else if rate > 0 {
                    let nowPlaying = server.nowPlaying
                    try await player.setRate(min(max(rate, nowPlaying.minimumRate), nowPlaying.maximumRate))
                } else {
                    note("MPRIS rate \(rate): negative rates are not supported")
                }
            case .quit:
                onQuit()
            case .raise, .volume:
                break
            }
        } catch {
            note("MPRIS \(command): \(error)")
        }
    }

    private func play(_ player: Player) async throws {
        stoppedByRemote = false
        if ended {
            // After the end, Play starts the item again from the beginning.
            try await player.seek(to: .zero)
        }
        try await player.play()
    }
}
