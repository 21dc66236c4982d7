import GStreamer

/// The player's command queue (GstPlay's shape): operations that drive the pipeline through several awaited steps
/// (preroll, play, pause, seek, rate, a coordinated preparation) run one at a time, in the order they were asked;
/// a seek waiting for its turn takes the target of any later seek (newest wins) and every caller of the merged
/// seek gets its result. Without it, two operations interleaved at their awaits on one pipeline (a pause inside a
/// seek's preroll) and flags had to patch over it.
///
/// Not queued, on purpose: `stop`, `load` and the audio output supervisor's sink replacement pre-empt (they take
/// the pipeline down, and whatever is in flight then sees its wait end); `startCoordinated` is synchronous (no
/// actor hop may come between the barrier and the instant).
///
/// Threading: a value owned by the `Player` actor; continuations are resumed on the actor.
struct PlayerOperationQueue {
    /// An operation holds the pipeline.
    fileprivate var busy = false
    /// Operations waiting for their turn, oldest first.
    fileprivate var waiting: [CheckedContinuation<Void, Never>] = []
    /// The seek waiting for its turn, if any (later seeks merge into it).
    fileprivate var queuedSeek: QueuedSeek?

    fileprivate struct QueuedSeek {
        var position: ClockTime
        var accurate: Bool
        /// Callers whose seeks were merged into this one (the first caller runs it).
        var merged: [CheckedContinuation<Void, Error>] = []
    }

    /// Whether an operation holds the pipeline now.
    var isBusy: Bool { busy }
    /// The target of the seek waiting for its turn, and how many later seeks merged into it.
    var queuedSeekTarget: (position: ClockTime, merged: Int)? { queuedSeek.map { ($0.position, $0.merged.count) } }
}

extension Player {
    /// Runs `body` when no other queued operation holds the pipeline, and holds it meanwhile.
    func exclusively<T>(_ body: () async throws -> T) async throws -> T {
        await acquireOperation()
        defer { releaseOperation() }
        return try await body()
    }

    private func acquireOperation() async {
        guard operations.busy else {
            operations.busy = true
            return
        }
        await withCheckedContinuation { operations.waiting.append($0) }
        // Handed over by `releaseOperation`: `busy` stayed true.
    }

    private func releaseOperation() {
        if operations.waiting.isEmpty {
            operations.busy = false
        } else {
            operations.waiting.removeFirst().resume()
        }
    }

    /// A seek through the queue: merged into a seek already waiting for its turn (newest target wins), or queued
    /// and run. Every caller returns when the seek that ran has prerolled (or throws its error).
    func queuedSeek(to position: ClockTime, accurate: Bool, timeout: Duration) async throws {
        if operations.queuedSeek != nil {
            operations.queuedSeek?.position = position
            operations.queuedSeek?.accurate = accurate
            try await withCheckedThrowingContinuation { operations.queuedSeek?.merged.append($0) }
            return
        }
        operations.queuedSeek = PlayerOperationQueue.QueuedSeek(position: position, accurate: accurate)
        await acquireOperation()
        defer { releaseOperation() }
        // Taken now: any seek asked while this one waited is in it.
        guard let seek = operations.queuedSeek else { return }
        operations.queuedSeek = nil
        do {
            try await seekNow(to: seek.position, accurate: seek.accurate, timeout: timeout)
            for caller in seek.merged { caller.resume() }
        } catch {
            for caller in seek.merged { caller.resume(throwing: error) }
            throw error
        }
    }
}
