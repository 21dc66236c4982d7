import GStreamer
import Multiview

/// What a stage asks of a coordinated view, the same whichever medium carries the group: its tag's label and
/// "what happened?". `CoordinatedStage` (in process) and `NetworkCoordinatedStage` (a group session's member)
/// both call these; they differ only in how they read their group's time.
extension PlayerCoordination {
    /// The view's coordination state for its tag: its suspensions, `waiting` while it waits for the group's
    /// start, otherwise the player's state.
    public func stageLabel() async -> String {
        let reasons = await coordinator.suspensionReasons
        if !reasons.isEmpty { return "suspended: " + reasons.map(\.rawValue).joined(separator: ", ") }
        let status = await player.currentStatus
        if status.waitingToPlay == .waitingForCoordinatedPlayback { return "waiting" }
        return status.state == .playing ? "playing" : status.state.description.lowercased()
    }

    /// "What happened?": suspends this view, goes back 5 s, plays at 2× until it has caught up with its group
    /// (or the group no longer plays), then ends the suspension: it rejoins at the group's time and rate. The
    /// other views never pause. Checks every 50 ms for up to 30 s on `waitClock`; at each check `group` reads the
    /// group's state for the item and the time on the pipelines' clock (read anew each time: a member's medium
    /// changes when its host comes back).
    public func whatHappened(waitClock: any _Concurrency.Clock<Duration>,
                             group: @Sendable (_ item: String) async -> (state: GroupState?, now: ClockTime)) async throws {
        let suspension = await coordinator.beginSuspension(for: .whatHappened)
        do {
            let now = await player.position ?? .zero
            try await player.seekLocally(to: ClockTime.seconds(max(0, now.seconds - 5)))
            try await player.setRateLocally(2.0)
            try await player.playLocally()
            let elapsed = stopwatch(on: waitClock)
            while elapsed() < .seconds(30) {
                let (state, pipelineNow) = await group(coordinator.itemIdentifier)
                let groupTime = state?.mediaTime(at: pipelineNow) ?? .zero
                let mine = await player.position ?? .zero
                if mine >= groupTime || state?.isPlaying != true { break }
                try await waitClock.sleep(for: .milliseconds(50))
            }
        } catch {
            try? await suspension.end()
            throw error
        }
        try await suspension.end()
    }
}
