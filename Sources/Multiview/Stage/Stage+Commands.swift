import GStreamer

/// Command dispatch: each command is checked (numbers, view numbers, seek targets against the media's end) and then
/// carried out by a task of its own (`StageCommandTasks`): the stage's input loop never waits for a player.
extension Stage {
    /// Checks `command` and starts what carries it out; a refused command is one error line.
    func dispatch(_ command: StageCommand) {
        do {
            // `audio N` / `external N` for a view that does not exist are the routing layer's to refuse (one event).
            if let number = command.view, !command.isRoutePreference {
                _ = try StageLimits.view(number, count: views.count, input: command.typed)
            }
            switch command {
            case .help:
                reporter.note(StageHelp.text)
            case .setVolume, .changeVolume, .toggleMute:
                startVolume(command)
            case .quit:
                afterEarlierCommands { [self] in await end(.quit) }
            case .status:
                afterEarlierCommands { [self] in await printStatus() }
            case .togglePause:
                let playing = intendedPlaying ?? statuses.values.contains { $0.state == .playing }
                dispatch(playing ? .pause : .play)
            case .play, .pause, .seekBy, .seekTo, .rate:
                try startTransport(command)
            case .add(let uri):
                let placeholder = views.count + 1
                commandTasks.start(command, on: .addView(placeholder), { [self] in
                    await addViews(uri)
                    return .done
                }, then: finisher(.addView(placeholder)))
            case .priority(let number, _):
                guard let observer = configuration.observer else {
                    return reporter.error("'\(command.typed)' needs HLS views (http://…/master.m3u8) or --priority/--bandwidth")
                }
                let reporter = self.reporter
                commandTasks.start(command, on: .priority(number), { [self] in
                    reporter.note(await observer.perform(command))
                    await refreshObserverLabels()
                    return .done
                }, then: finisher(.priority(number)))
            case .preferAudio(let number), .preferExternal(let number):
                guard let routing = configuration.routing else {
                    return reporter.error("'\(command.typed)' needs audio routing (--audio-route / --external-display)")
                }
                commandTasks.start(command, on: .routePreference, { [self] in
                    if case .preferAudio = command { await routing.preferAudio(number) } else { await routing.preferExternal(number) }
                    await updateAllTags()
                    return .done
                }, then: finisher(.routePreference))
            case .whatHappened(let number):
                guard let coordination = configuration.coordination, let player = players[number] else {
                    return reporter.error("'\(command.typed)' needs --coordinated and a view that opened")
                }
                let reporter = self.reporter
                commandTasks.start(command, on: .whatHappened(number), {
                    do {
                        try await coordination.whatHappened(player)
                        reporter.note("view \(number) caught up and rejoined")
                        return .done
                    } catch {
                        return .failed("what happened on view \(number): \(error)")
                    }
                }, then: finisher(.whatHappened(number)))
            case .audioLanguage(let number, let language):
                guard let player = players[number] else { return reporter.error("'\(command.typed)': view \(number) did not open") }
                let reporter = self.reporter
                commandTasks.start(command, on: .language(number), {
                    do { try await player.selectAudio(language: language) } catch { return .failed("\(error)") }
                    reporter.note("view \(number): audio \(language)")
                    return .done
                }, then: finisher(.language(number)))
            case .subtitles(let number, let language):
                guard let player = players[number] else { return reporter.error("'\(command.typed)': view \(number) did not open") }
                let reporter = self.reporter
                commandTasks.start(command, on: .language(number), {
                    do { try await player.selectSubtitles(language.map { .language($0) } ?? .off) } catch { return .failed("\(error)") }
                    reporter.note("view \(number): subtitles \(language ?? "off")")
                    return .done
                }, then: finisher(.language(number)))
            case .trickPlay(let number, let rate):
                guard let trickPlay = configuration.trickPlay, configuration.coordination == nil,
                      let player = players[number], let source = viewSources[number] else {
                    return reporter.error("'\(command.typed)' needs an existing uncoordinated view")
                }
                let reporter = self.reporter
                commandTasks.start(command, on: .trickPlay(number), {
                    await Stage.startTrickPlay(trickPlay, player: player, source: source, rate: rate, reporter: reporter)
                }, then: finisher(.trickPlay(number)))
            case .preview(let number, let seconds, let path):
                guard let trickPlay = configuration.trickPlay, let player = players[number], let source = viewSources[number] else {
                    return reporter.error("'\(command.typed)' needs an existing view")
                }
                let reporter = self.reporter
                commandTasks.start(command, on: .trickPlay(number), {
                    reporter.note(await trickPlay.preview(player, source: source, seconds: seconds, path: path))
                    return .done
                }, then: finisher(.trickPlay(number)))
            }
        } catch {
            reporter.error("\(error)")
        }
    }

    /// `s` and `q` act once the commands typed before them are done (`+10` then `s` shows the new position), but
    /// wait at most `Stage.settleLimit`: a stuck view never holds them longer.
    private func afterEarlierCommands(_ action: @escaping @Sendable () async -> Void) {
        let tasks = commandTasks
        runTasks.append(Task {
            await tasks.settle(atMost: Stage.settleLimit)
            await action()
        })
    }

    private func printStatus() { reporter.statusReport(statusReport()) }

    /// Ends the run: the loop stops at its next input (woken here).
    func end(_ reason: StageEndReason) {
        if endReason == nil { endReason = reason }
        inputContinuation?.yield(.wake)
    }

    /// What a command task does when it ended: a failure is one error line; the target's entry is forgotten.
    func finisher(_ target: CommandTarget) -> @Sendable (Int, CommandResult) async -> Void {
        { [self] id, result in await commandEnded(target, id: id, result: result) }
    }

    private func commandEnded(_ target: CommandTarget, id: Int, result: CommandResult) {
        commandTasks.finished(target, id: id)
        if case .failed(let line) = result { reporter.error(line) }
    }

    /// `ff N` / `rew N`: the view is paused and trick play starts from where it was; when the trick-play layer
    /// refuses (a local file: trick play needs an HLS I-frame playlist) the view plays on as before.
    nonisolated static func startTrickPlay(_ trickPlay: any StageTrickPlay, player: Player, source: MediaSource,
                                           rate: Double, reporter: StageReporter) async -> CommandResult {
        let wasPlaying = await player.currentStatus.state == .playing
        do { try await player.pause() } catch { return .failed("\(error)") }
        let from = player.queryPosition().map { Double($0.nanoseconds) / 1e9 } ?? 0
        switch await trickPlay.start(player, source: source, rate: rate, from: from) {
        case .started(let note):
            reporter.note(note)
            return .done
        case .refused(let note):
            reporter.note(note)
            guard wasPlaying else { return .done }
            do { try await player.play() } catch { return .failed("\(error)") }
            return .done
        }
    }

    // MARK: Transport

    /// Play, pause, seek, rate. Coordinated: one task for the group (through one view's coordinator). Uncoordinated:
    /// one task per view, so a view that does not answer delays only itself; one line once every view is done.
    private func startTransport(_ command: StageCommand) throws(StageInputError) {
        if case .seekTo(let seconds) = command {
            _ = try StageLimits.seekTarget(seconds, end: mediaEnd(), input: command.typed)
        }
        let live = views.compactMap { failures[$0.number] == nil ? players[$0.number] : nil }
        guard !live.isEmpty else { return reporter.error("'\(command.typed)': no view is playing") }
        if case .play = command { intendedPlaying = true }
        if case .pause = command { intendedPlaying = false }
        var tasks: [(CommandTarget, Int, Task<CommandResult, Never>)] = []
        if configuration.coordination != nil, let leader = live.first {
            let (id, task) = commandTasks.start(command, on: .groupTransport) {
                await Stage.perform(command, on: leader)
            }
            tasks.append((.groupTransport, id, task))
        } else {
            let trickPlay = configuration.trickPlay
            let reporter = self.reporter
            for player in live {
                let target = CommandTarget.viewTransport(player.view.number)
                let (id, task) = commandTasks.start(command, on: target) {
                    if let failed = await Stage.endTrickPlay(trickPlay, player: player, reporter: reporter) { return failed }
                    return await Stage.perform(command, on: player)
                }
                tasks.append((target, id, task))
            }
        }
        let started = tasks
        commandTasks.startReporter { [self] reporterID in
            var results: [CommandResult] = []
            for (_, _, task) in started { results.append(await task.value) }
            await transportEnded(command, tasks: started.map { ($0.0, $0.1) }, results: results, reporterID: reporterID)
        }
    }

    private func transportEnded(_ command: StageCommand, tasks: [(CommandTarget, Int)], results: [CommandResult],
                                reporterID: Int) {
        commandTasks.reporterFinished(reporterID)
        for (target, id) in tasks { commandTasks.finished(target, id: id) }
        if !commandTasks.isRunning(where: { if case .viewTransport = $0 { true } else { $0 == .groupTransport } }) {
            intendedPlaying = nil
        }
        // A newer command took over: it reports.
        if results.contains(.superseded) { return }
        switch command {
        case .seekBy, .seekTo: ended.removeAll()
        default: break
        }
        for case .failed(let line) in results { reporter.error(line) }
        reporter.note("\(command.typed): done")
    }

    /// One transport call on one player (coordinated: the player's coordinator takes it to the group).
    nonisolated static func perform(_ command: StageCommand, on player: Player) async -> CommandResult {
        do {
            switch command {
            case .play: try await player.play()
            case .pause: try await player.pause()
            case .seekBy(let s): try await player.seek(by: s)
            case .seekTo(let s): try await player.seek(to: .seconds(s))
            case .rate(let r): try await player.setRate(r)
            default: return .done
            }
            return .done
        } catch {
            return .failed("\(player.view): \(command.typed): \(error)")
        }
    }

    /// A transport command ends trick play on the view first: it seeks to where trick play stopped (then the
    /// command acts). Returns a failure, or nil to go on.
    nonisolated static func endTrickPlay(_ trickPlay: (any StageTrickPlay)?, player: Player,
                                         reporter: StageReporter) async -> CommandResult? {
        guard let trickPlay, let position = await trickPlay.stop(view: player.view.number) else { return nil }
        do {
            try await player.seek(to: .seconds(position))
        } catch {
            return .failed("\(player.view): resuming after trick play: \(error)")
        }
        reporter.note("view \(player.view.number): trick play ended at \(String(format: "%.1f", position)) s")
        return nil
    }

    /// The end of the media for an absolute seek: the shortest duration among the views still playing, so that no
    /// view is sent past its own end, coordinated or not (nil when no view knows its duration, e.g. live).
    func mediaEnd() -> Double? {
        views.compactMap { view -> Double? in
            guard failures[view.number] == nil, let player = players[view.number] else { return nil }
            return player.pipeline.queryDuration().map { Double($0.nanoseconds) / 1e9 }
        }.min()
    }
}
