import Synchronization

/// A gate fake playback targets hold their preparations at: while it is closed, `pass()` waits; `open()` lets the
/// waiting ones (and later ones) through. A cancelled wait ends at once (a readiness deadline cancels preparations).
///
/// Threading: one `Mutex` owns the flag and the waiting continuations; they are resumed outside it.
public final class TestGate: Sendable {
    private let state = Mutex<(closed: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func close() { state.withLock { $0.closed = true } }

    public func open() {
        let waiting = state.withLock { state in
            state.closed = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// How many wait at the gate now.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// Returns at once while open; otherwise when it opens or the task is cancelled.
    public func pass() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let through = state.withLock { state -> Bool in
                    guard state.closed, !Task.isCancelled else { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if through { continuation.resume() }
            }
        } onCancel: {
            open()
        }
    }
}
