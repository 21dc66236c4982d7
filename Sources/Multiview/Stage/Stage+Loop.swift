import Foundation

/// `--loop`: views that reach their end start again from the beginning.
extension Stage {
    /// View `number` reached its end. Uncoordinated, it alone goes back to 0 and plays on. Coordinated, the group
    /// waits until every live view has ended, then one group seek to 0 takes all of them back together (a view
    /// restarting alone would leave the group's time).
    func restartAtEnd(_ number: Int) {
        if configuration.coordination != nil {
            let live = views.filter { failures[$0.number] == nil && players[$0.number] != nil }
            guard let leader = live.first.flatMap({ players[$0.number] }),
                  live.allSatisfy({ ended.contains($0.number) }) else { return }
            reporter.note("loop: every view back to the start")
            let (id, task) = commandTasks.start(.seekTo(0), on: .groupTransport) {
                await Stage.restart(leader)
            }
            commandTasks.startReporter { [self] reporterID in
                let result = await task.value
                await loopRestarted(nil, target: .groupTransport, id: id, result: result, reporterID: reporterID)
            }
        } else {
            guard let player = players[number] else { return }
            reporter.note("\(player.view): loop: back to the start")
            let target = CommandTarget.viewTransport(number)
            let (id, task) = commandTasks.start(.seekTo(0), on: target) {
                await Stage.restart(player)
            }
            commandTasks.startReporter { [self] reporterID in
                let result = await task.value
                await loopRestarted(number, target: target, id: id, result: result, reporterID: reporterID)
            }
        }
    }

    /// Seek to 0 and play (through the coordinator when coordinated: one group seek, one group start).
    nonisolated static func restart(_ player: Player) async -> CommandResult {
        do {
            try await player.seek(to: .zero)
            try await player.play()
            return .done
        } catch {
            // A view that failed meanwhile has its own error line (the stage reports every failure, refined:
            // "retrying until the server is back"); this one would say the same thing a second time.
            if await player.failure != nil { return .done }
            return .failed("\(player.view): loop: \(error)")
        }
    }

    /// The restart of view `number` (nil: the group) is done: the view is no longer at its end.
    private func loopRestarted(_ number: Int?, target: CommandTarget, id: Int, result: CommandResult, reporterID: Int) {
        commandTasks.reporterFinished(reporterID)
        commandTasks.finished(target, id: id)
        if case .failed(let line) = result { reporter.error(line) }
        if let number { ended.remove(number) } else { ended.removeAll() }
    }
}
