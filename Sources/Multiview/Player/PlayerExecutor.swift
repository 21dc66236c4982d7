import Dispatch

/// Where a player's actor runs: a serial dispatch queue of its own instead of Swift's cooperative pool.
///
/// Why: the actor calls GStreamer synchronously — state changes (NULL joins the streaming threads, and a stuck
/// element holds it for as long as it is stuck), queries, seeks. On the cooperative pool (two threads on this
/// machine, shared by every view, the coordination layer and the tests' own tasks) one such call takes half the
/// pool, two take all of it, and then no view handles its bus, its starvation watch or its deadlines. A dispatch
/// queue's worker may block: libdispatch brings up another thread for the other queues meanwhile.
///
/// Also a `TaskExecutor`: the player's own tasks (bus reader, starvation watch, PulseAudio poll) prefer it, so
/// their non-isolated parts stay off the pool too.
///
/// Sendable: the only state is an immutable `DispatchQueue` (itself thread-safe).
final class PlayerExecutor: SerialExecutor, TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `self` is captured strongly: the unowned references the job runs with stay valid until it has run,
        // even when the player that owned this executor is released meanwhile.
        queue.async { [self] in
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
