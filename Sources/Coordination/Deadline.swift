/// `body` ran longer than its limit on the given clock.
struct DeadlineExceeded: Error, Sendable, Equatable {
    var limit: Duration
}

/// Runs `body`, failing with `DeadlineExceeded` when it takes longer than `limit` on `clock` (then `body` is
/// cancelled, and this returns once it has ended).
func withDeadline<T: Sendable>(_ limit: Duration, on clock: any Clock<Duration>,
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await clock.sleep(for: limit)
            throw DeadlineExceeded(limit: limit)
        }
        guard let first = try await group.next() else { throw CancellationError() }
        group.cancelAll()
        return first
    }
}

/// A stopwatch on `clock`: the time since it was made, each time it is called.
func stopwatch(on clock: any Clock<Duration>) -> @Sendable () -> Duration {
    func start<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let began = clock.now
        return { began.duration(to: clock.now) }
    }
    return start(clock)
}

/// A sleep on `clock` until `span` after the moment this is called, not after the sleep begins: the task that sleeps
/// may start late (a loaded machine, or a test clock that moved meanwhile).
func alarm(on clock: any Clock<Duration>, after span: Duration) -> @Sendable () async throws -> Void {
    func make<C: Clock<Duration>>(_ clock: C) -> @Sendable () async throws -> Void {
        let deadline = clock.now.advanced(by: span)
        return { try await clock.sleep(until: deadline, tolerance: nil) }
    }
    return make(clock)
}
