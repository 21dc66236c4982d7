import CGStreamer
import Synchronization

/// Receives a `NetClientClock`'s statistics (from its private bus's sync handler, on GStreamer's polling
/// thread) and its "synced" signal, and hands them to Swift: the latest observation, statistics streams, and
/// `waitForSync` continuations.
///
/// Threading: all mutable state lives in one `Mutex`; continuations are resumed outside the lock.
final class NetClockObserver: Sendable {
    private struct State {
        var latest: NetClockStatistics?
        var subscribers: [Int: AsyncStream<NetClockStatistics>.Continuation] = [:]
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        /// Outcomes (timeout, cancellation) that arrived before their waiter registered.
        var early: [Int: any Error] = [:]
        var nextID = 0
        var finished = false
    }
    private let state = Mutex(State())

    var latest: NetClockStatistics? { state.withLock { $0.latest } }

    func subscribe() -> AsyncStream<NetClockStatistics> {
        let (stream, continuation) = AsyncStream<NetClockStatistics>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let accepted = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
            }
            return true
        }
        if !accepted { continuation.finish() }
        return stream
    }

    func record(_ statistics: NetClockStatistics) {
        let subscribers = state.withLock { state in
            state.latest = statistics
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(statistics) }
    }

    /// The clock's "synced" signal: wakes every waiter when it became synchronised.
    func clockSynced(_ synced: Bool) {
        guard synced else { return }
        let waiters = state.withLock { state in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends every stream and fails every waiter (the clock is going away).
    func finish() {
        let (subscribers, waiters) = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll(); state.waiters.removeAll() }
            return (Array(state.subscribers.values), Array(state.waiters.values))
        }
        for subscriber in subscribers { subscriber.finish() }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    private func resumeWaiter(_ id: Int, with error: any Error) {
        let waiter = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.early[id] = error
                return nil as CheckedContinuation<Void, any Error>?
            }
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    func waitForSync(isSynchronised: @escaping @Sendable () -> Bool, timeout: Duration,
                     timeoutError: @escaping @Sendable () -> any Error) async throws {
        if isSynchronised() { return }
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.resumeWaiter(id, with: timeoutError())
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> (any Error)? in
                    if state.finished { return CancellationError() }
                    if let early = state.early.removeValue(forKey: id) { return early }
                    state.waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(throwing: outcome); return }
                // The signal may have fired between the first check and registering: check again.
                if isSynchronised() {
                    let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                    waiter?.resume()
                }
            }
        } onCancel: { [weak self] in
            self?.resumeWaiter(id, with: CancellationError())
        }
    }

    /// The private bus's sync handler: keeps `gst-netclock-statistics`, drops everything (it owns the message).
    static let syncHandler: GstBusSyncHandler = { _, message, userData in
        guard let message, let userData else { return GST_BUS_PASS }
        let observer = Unmanaged<NetClockObserver>.fromOpaque(userData).takeUnretainedValue()
        if message.pointee.type == GST_MESSAGE_ELEMENT, let raw = gst_message_get_structure(message),
           let statistics = NetClockStatistics(reading: raw) {
            observer.record(statistics)
        }
        gst_message_unref(message)
        return GST_BUS_DROP
    }

    static let release: GDestroyNotify = { userData in
        guard let userData else { return }
        Unmanaged<NetClockObserver>.fromOpaque(userData).release()
    }
}
