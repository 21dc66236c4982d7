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
        var merged: [CheckedContinuation<Bool, Error>] = []
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
        // Checked again inside: the body runs on the actor but not necessarily in this same job. Entering
        // `withCheckedContinuation` can hop (re-enqueue on the player's queue) before the body runs, and the
        // operation holding the queue can end in between; it then found nobody waiting, and this caller would
        // have waited for a hand-over that never came (seen: `seek` typed while the view opened, never answered).
        await withCheckedContinuation { continuation in
            if operations.busy {
                operations.waiting.append(continuation)
            } else {
                operations.busy = true
                continuation.resume()
            }
        }
        // Handed over by `releaseOperation` (`busy` stayed true), or taken when it turned out free.
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
            // As in `acquireOperation`, the body may run a job later: if the waiting seek was taken meanwhile,
            // it runs without this target, so this caller queues a seek of its own instead of waiting on nothing.
            let merged = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, Error>) in
                if operations.queuedSeek != nil {
                    operations.queuedSeek?.merged.append(continuation)
                } else {
                    continuation.resume(returning: false)
                }
            }
            if merged { return }
            return try await queuedSeek(to: position, accurate: accurate, timeout: timeout)
        }
        operations.queuedSeek = PlayerOperationQueue.QueuedSeek(position: position, accurate: accurate)
        await acquireOperation()
        defer { releaseOperation() }
        // Taken now: any seek asked while this one waited is in it.
        guard let seek = operations.queuedSeek else { return }
        operations.queuedSeek = nil
        // This caller was cancelled while it waited (the stage cancels a superseded seek): its cancellation is not
        // the seek's outcome for the callers merged into it, who were not. They queue the seek again (the newest
        // target still wins) instead of getting this caller's CancellationError: the soak-seek-race printed
        // "error: view N: seek T: CancellationError()" for seeks that merely came last.
        func handOver() -> CancellationError {
            for caller in seek.merged { caller.resume(returning: false) }
            return CancellationError()
        }
        if Task.isCancelled { throw handOver() }
        do {
            try await seekNow(to: seek.position, accurate: seek.accurate, timeout: timeout)
            for caller in seek.merged { caller.resume(returning: true) }
        } catch is CancellationError where Task.isCancelled {
            // Cancelled during the seek: the same hand-over (the seek may have landed; queued again, it lands).
            throw handOver()
        } catch {
            for caller in seek.merged { caller.resume(throwing: error) }
            throw error
        }
    }
}
