import Foundation
import Multiview

/// Plugs a `PriorityManager` into a `Stage`: every view is attached with its starting priority and tile size,
/// its label (priority + shown rung) goes into the tile tag and status line, `priority N high` and the window's
/// number keys change priorities, and a failed HLS view's error names the broken playlist.
/// Threading: stateless apart from the manager (an actor) and immutable starting priorities.
public struct PriorityStageObserver: StageViewObserver {
    public let manager: PriorityManager
    /// Starting priority per 1-based view number (others start at `.default`).
    public let initialPriorities: [Int: NetworkResourcePriority]

    public init(manager: PriorityManager, initialPriorities: [Int: NetworkResourcePriority]) {
        self.manager = manager; self.initialPriorities = initialPriorities
    }

    public func attach(_ player: Player, source: MediaSource, tileWidth: Int?, tileHeight: Int?) async {
        await manager.attach(player, source: source, priority: initialPriorities[player.view.number] ?? .default,
                             tileWidth: tileWidth, tileHeight: tileHeight)
    }

    /// A bigger tile may use a higher rung (and a smaller one frees bandwidth): the allocator runs again.
    public func tileResized(view number: Int, width: Int, height: Int) async {
        await manager.setTile(width: width, height: height, forView: number)
    }

    public func label(forView number: Int) async -> String? {
        guard let report = await manager.report(forView: number), report.rungCount > 0 else { return nil }
        return report.label
    }

    public func perform(_ command: StageCommand) async -> String {
        guard case .priority(let number, let level) = command else { return "\(command): not a priority command" }
        guard let current = await manager.priority(ofView: number) else { return "priority: no view \(number)" }
        let wanted: NetworkResourcePriority
        if level == "next" {
            wanted = current.next
        } else if let parsed = NetworkResourcePriority(rawValue: level) {
            wanted = parsed
        } else {
            return "priority: '\(level)' is not low, default or high"
        }
        await manager.setPriority(wanted, forView: number)
        let allocation = await manager.lastAllocation?.views[number]
        return "view \(number) priority \(wanted)" + (allocation.map { ", cap \($0.rung)" } ?? "")
    }

    public func isRetrying(view number: Int) async -> Bool {
        await manager.isRecovering(view: number)
    }

    /// Starts bringing view N back; true when that started or was under way already.
    private func bringsBack(view number: Int) async -> Bool {
        if await manager.startRecovery(view: number) { return true }
        return await manager.isRecovering(view: number)
    }

    public func refine(_ failure: PlayerError) async -> PlayerError {
        let number = failure.view.number
        let why = await manager.explainFailure(ofView: number)
        // The server went away (connection refused / no answer): keep the view, retry until it is back (an HLS
        // view; another is not retried, and is not said to be). Already being brought back: a reload failed again.
        if case .network = failure.cause, why == nil || why?.contains("not answering") == true,
           await bringsBack(view: number) {
            return PlayerError(view: failure.view, cause: .network("\(why ?? "\(failure.cause)") — retrying until the server is back"),
                               underlying: failure.underlying)
        }
        await manager.detach(view: number)   // its share goes to the others
        guard let why else { return failure }
        let network = why.contains("HTTP") || why.contains("not answering")
        return PlayerError(view: failure.view, cause: network ? .network(why) : .corruptMedia(why),
                           underlying: failure.underlying)
    }
}
