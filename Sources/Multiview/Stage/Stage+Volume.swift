import Foundation

/// `volume [N] P`, `volume ±P`, `mute [N]` and the window's `m`, `/`, `*` keys: each view's own volume and mute
/// (`Player+Volume.swift`), not the PulseAudio stream's. The routing arbiter suppresses a view by muting its stream on
/// the server, which is separate: a suppressed view stays suppressed whatever its volume or mute here.
extension Stage {
    /// Starts the volume command on the `.volume` chain (in order with the ones before it); one note with the
    /// resulting levels, or one error line.
    func startVolume(_ command: StageCommand) {
        let targets: [Player]
        if let number = command.view {
            guard let player = players[number], failures[number] == nil else {
                return reporter.error("'\(command.typed)': view \(number) is not playing")
            }
            targets = [player]
        } else {
            targets = views.compactMap { failures[$0.number] == nil ? players[$0.number] : nil }
        }
        guard !targets.isEmpty else { return reporter.error("'\(command.typed)': no view is playing") }
        let reporter = self.reporter
        commandTasks.start(command, on: .volume, { [self] in
            do {
                try await Stage.applyVolume(command, to: targets)
                let levels = try targets.map { "\($0.view.number) \(Stage.levelText(try $0.audioLevel))" }
                reporter.note("volume: " + levels.joined(separator: ", "))
            } catch {
                return .failed("'\(command.typed)': \(error)")
            }
            await updateAllTags()
            return .done
        }, then: finisher(.volume))
    }

    nonisolated static func applyVolume(_ command: StageCommand, to players: [Player]) async throws {
        switch command {
        case .setVolume(_, let percent):
            for player in players { try await player.setVolume(percent / 100) }
        case .changeVolume(let step):
            // Kept within the range `volume P` allows.
            for player in players {
                let now = try player.audioLevel.volume * 100
                let next = min(max(now + step, StageLimits.volumes.lowerBound), StageLimits.volumes.upperBound)
                try await player.setVolume(next / 100)
            }
        case .toggleMute:
            // Every view muted unless every view already was (then all unmuted): one press, one state for all.
            let allMuted = try players.allSatisfy { try $0.audioLevel.muted }
            for player in players { try await player.setMuted(!allMuted) }
        default:
            break
        }
    }

    /// "50%", "50% muted".
    nonisolated static func levelText(_ level: Player.AudioLevel) -> String {
        "\(Int((level.volume * 100).rounded()))%" + (level.muted ? " muted" : "")
    }
}
