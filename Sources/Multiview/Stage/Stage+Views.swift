import Foundation
import GStreamer

/// View lifecycle (create a view's player, add one while running, record a failure) and what the views show (tags
/// in the window, the status line).
extension Stage {
    /// Creates one view's player and forwards its events into the stage's input stream.
    func makePlayer(_ view: ViewIdentity, source: MediaSource) async {
        guard let continuation = inputContinuation else { return }
        // A scheme nothing reads, or HLS from the disk, fails now, in words, rather than in GStreamer's.
        if let cause = SourceDiagnosis.refusedBeforePlaying(source) { return recordFailure(PlayerError(view: view, cause: cause)) }
        let index = view.number - 1
        let tile = window.flatMap { index < $0.tiles.count ? $0.tiles[index] : nil }
        let video: VideoOutput = tile.map { .window($0) } ?? .fakeSink
        var config = PlayerConfiguration(view: view, video: video, audio: audio, visualizeAudioOnly: window != nil)
        config.audioPlayoutTiming = configuration.audioPlayoutTiming
        if let routing = configuration.routing { config = await routing.configure(config) }
        do {
            let player = try Player(configuration: config)
            players[view.number] = player
            viewSources[view.number] = source
            if let observer = configuration.observer {
                await observer.attach(player, source: source, tileWidth: tile?.width, tileHeight: tile?.height)
            }
            if let tile { followTileSize(of: player, tile: index, builtFor: tile) }
            await configuration.routing?.attach(player)
            await configuration.playerCreated?(player)
            let events = await player.events()
            runTasks.append(Task { for await event in events { continuation.yield(.player(view.number, event)) } })
        } catch let error as PlayerError {
            recordFailure(error)
        } catch {
            recordFailure(PlayerError(view: view, cause: .setup("\(error)")))
        }
    }

    /// `add URI` while running: as on the command line, a folder or a plain playlist gives one view per media file
    /// (`PlaylistExpansion`), anything else one view. In a window, as many are added as there are free tiles; the
    /// rest are refused in one line. Coordinated, each joins the group in sync. One line per view added.
    func addViews(_ uri: String) async {
        let expanded: PlaylistExpansion.Result
        do {
            expanded = try await PlaylistExpansion.expandOffPool([uri])
        } catch {
            return reporter.error("add: \(error)")   // the error names the folder or playlist
        }
        for note in expanded.notes { reporter.note(note) }
        // Numbered and appended before any wait, so additions running side by side never share a number or a tile.
        let sources = expanded.media.map(MediaSource.init)
        let free = window.map { max(0, $0.tiles.count - views.count) } ?? sources.count
        let added = sources.prefix(free).map { source in
            let view = ViewIdentity(number: views.count + 1, name: Stage.viewName(source))
            views.append(view)
            return (view, source)
        }
        let refused = sources.dropFirst(free)
        if let first = refused.first {
            let what = refused.count == 1
                ? "\(ViewIdentity(number: views.count + 1, name: Stage.viewName(first)))"
                : "\(refused.count) more views (" + refused.prefix(3).map(Stage.viewName).joined(separator: ", ")
                    + (refused.count > 3 ? ", …)" : ")")
            reporter.error("add \(uri): no free tile for \(what): start with --spare-tiles or headless")
        }
        for (view, source) in added { await startAddedView(view, source: source) }
    }

    /// Opens a view `addViews` numbered and starts it (coordinated: joins the group).
    private func startAddedView(_ view: ViewIdentity, source: MediaSource) async {
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

    /// The view's video follows its tile's size: the window calls back (on its event thread) whenever the tiles are
    /// laid out again; a layout that came between building the player and this call is caught up at once.
    /// The observer (HLS priorities: which rung covers the tile) hears the size too, read when its task runs, so
    /// the last task to run tells the last size whatever order a drag's tasks run in.
    private func followTileSize(of player: Player, tile index: Int, builtFor tile: WindowTarget) {
        let reporter = self.reporter, observer = configuration.observer, window = self.window
        let resize: @Sendable (Int, Int) -> Void = { width, height in
            do {
                try player.resizeTile(width: width, height: height)
            } catch {
                reporter.error("\(player.view): could not scale the video to its tile (\(width)x\(height)): \(error)")
            }
            guard let observer, let window else { return }
            Task {
                guard let now = window.tiles.dropFirst(index).first else { return }
                await observer.tileResized(view: player.view.number, width: now.width, height: now.height)
            }
        }
        if let now = window?.attachTile(index, onResize: resize), now.width != tile.width || now.height != tile.height {
            resize(now.width, now.height)
        }
    }

    /// The view's name: its file name, or the whole URI when that gives none (`foo://x`).
    nonisolated static func viewName(_ source: MediaSource) -> String {
        let name = source.displayName
        return name.isEmpty ? source.uri : name
    }

    /// A view failed; `retrying`: the observer is bringing it back (RETRYING, and not done: `allViewsDone`). A
    /// failure of a view already failed (a reload that failed again) changes only whether it is retried.
    func recordFailure(_ error: PlayerError, retrying: Bool = false) {
        let number = error.view.number
        if retrying { retryingViews.insert(number) }
        guard failures[number] == nil else { return }
        failures[number] = error
        reporter.viewFailed(error)
        window?.setMessage(Self.tileMessage(error, retrying: retrying), tile: number - 1)
    }

    /// A failed view's tile text: its name, then FAILED (or RETRYING while it is being brought back) and the cause.
    nonisolated static func tileMessage(_ error: PlayerError, retrying: Bool) -> String {
        "\(error.view)\n\(retrying ? "RETRYING" : "FAILED"): \(error.cause)"
    }

    /// Tells the routing layer that view N ended or failed (a task: the stage does not wait for PulseAudio).
    func tellRoutingViewEnded(_ number: Int) {
        guard let routing = configuration.routing else { return }
        commandTasks.start(.status, on: .viewEnded(number), {
            await routing.viewEnded(number)
            return .done
        }, then: { [self] id, _ in await commandTasks_finished(.viewEnded(number), id: id) })
    }

    private func commandTasks_finished(_ target: CommandTarget, id: Int) {
        commandTasks.finished(target, id: id)
    }

    /// Redraws view N's tag (window only) in a task of its own; a newer tag replaces one still being made. Called on
    /// every change the tag shows (a player's status or media info, volume, routes, an observer's label), so the
    /// window's label follows within the time this task takes (milliseconds), paused or not.
    func updateTag(_ number: Int) {
        guard let window, let player = players[number], let view = views.first(where: { $0.number == number })
        else { return }
        let info = infos[number].map { $0.resolutionText } ?? "…"
        let viewState = statuses[number].map { status -> String in
            if let waiting = status.waitingToPlay { return "waiting: \(waiting)" }
            return status.state.description.lowercased()
        } ?? ""
        let level = (try? player.audioLevel.label).flatMap { $0 }.map { "  \($0)" } ?? ""
        let extra = (observerLabels[number].map { "  \($0)" } ?? "") + level
        let coordination = configuration.coordination, routing = configuration.routing
        commandTasks.start(.status, on: .tag(number), alwaysSupersede: true, {
            var state = viewState
            if let label = await coordination?.label(for: player) { state = label }
            if let routes = await routing?.label(for: number) { state += "  \(routes)" }
            window.setTag("\(view.number) \(view.name)  \(info)  \(state)\(extra)", tile: number - 1)
            return .done
        }, then: { [self] id, _ in await commandTasks_finished(.tag(number), id: id) })
    }

    func updateAllTags() {
        for view in views { updateTag(view.number) }
    }

    /// Fetches the observer's labels; a changed label (a new rung, a new priority) updates that view's tag.
    func refreshObserverLabels() async {
        guard let observer = configuration.observer else { return }
        for view in views {
            // The tile says what the status says: RETRYING while the observer brings the view back, FAILED after.
            if failures[view.number] != nil, await observer.isRetrying(view: view.number) {
                if retryingViews.insert(view.number).inserted, let failure = failures[view.number] {
                    window?.setMessage(Self.tileMessage(failure, retrying: true), tile: view.number - 1)
                }
            } else if retryingViews.remove(view.number) != nil, let failure = failures[view.number] {
                window?.setMessage(Self.tileMessage(failure, retrying: false), tile: view.number - 1)
            }
            let label = await observer.label(forView: view.number)
            if label != observerLabels[view.number] {
                observerLabels[view.number] = label
                updateTag(view.number)
            }
        }
    }

    /// Every view's state now. Built from what the stage holds and one position/duration query per view
    /// (thread-safe queries on the pipeline, not a wait for the player's actor).
    func statusReport() -> StageStatus {
        let seconds = (ContinuousClock.now - startInstant).inSeconds
        return StageStatus(elapsed: seconds, views: views.map { view in
            var entry = StageStatus.View(number: view.number, name: view.name, state: .opening)
            if failures[view.number] != nil {
                entry.state = retryingViews.contains(view.number) ? .retrying : .failed
            } else if ended.contains(view.number) {
                entry.state = .ended
            } else if let status = statuses[view.number] {
                switch status.state {
                case .playing: entry.state = .playing
                case .paused: entry.state = .paused
                case .buffering: entry.state = .buffering
                case .stopped: entry.state = .stopped
                }
                entry.waiting = status.waitingToPlay?.description
                if let player = players[view.number], let position = player.queryPosition() {
                    entry.position = position
                    entry.duration = player.pipeline.queryDuration()
                }
                if let label = observerLabels[view.number] { entry.labels.append(label) }
                if let level = try? players[view.number]?.audioLevel.label { entry.labels.append(level) }
            }
            return entry
        })
    }
}
