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
/// A consequence to know (measured in a stand-alone program with this executor: 50 of 50 times): every job runs
/// with this task executor set, also the jobs of tasks that do not prefer it (a stage command's, a coordinator's),
/// and for those the runtime re-enqueues on entering `withCheckedContinuation`: its body runs on the actor but in a
/// *later* job, after whatever was already queued. A body that stores a continuation must therefore re-check the
/// state it waits for (see `acquireOperation`, `waitForAsyncDoneMessage`). Running jobs with the serial executor
/// only would stop that for tasks without a preference but start it for the player's own tasks (same program).
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
