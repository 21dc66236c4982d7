import Dispatch
import GStreamer
import Synchronization

/// The NULL state change of a failed view, run on a serial queue of its own instead of the player's.
///
/// Why: GStreamer 1.22.0's decodebin3 can deadlock a NULL that comes while it is still setting up a stream. In a
/// file with no decodable stream, the teardown (multiqueue deactivating a pad, multiqueue's lock held) waited for
/// that pad's streaming thread, which was inside a decodebin3 probe waiting for multiqueue's lock (1 run in about
/// 25 of the suite, `PlayerTests.testFileWithNoDecodableStreamIsATypedError`). Run on the player's queue, that
/// NULL blocked the actor for good, before the failure was even published: `play()` never returned and the view
/// never said why. Off the queue, the failure is published at once; a NULL still running after `deadline` is
/// reported (a warning naming the view), and the view cannot be loaded again (`load` throws `pipelineStuck`):
/// its pipeline and threads are left as they are, and the other views, which share none of them, play on.
///
/// Threading: the teardown's queue runs the state change and then `afterStop`; `finished` is Mutex-owned and
/// `done` is signalled once, after it is set, so `waitFinished` may block any thread with a deadline.
final class FailedPipelineTeardown: Sendable {
    /// How long a failed view's NULL may take before it is reported stuck (a normal one takes milliseconds).
    static let deadline: Duration = .seconds(5)

    private let finished = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    /// Starts taking `pipeline` to NULL on a new serial queue; `afterStop` runs there once it is NULL (not when
    /// GStreamer refused: then the pipeline is in no known state, and nothing should be cleared from it).
    init(pipeline: Pipeline, view: ViewIdentity, afterStop: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "multiview.view\(view.number).teardown").async { [self] in
            if (try? pipeline.setState(.null)) != nil { afterStop() }
            finished.withLock { $0 = true }
            done.signal()
        }
    }

    var isFinished: Bool { finished.withLock { $0 } }

    /// Blocks the calling thread until the NULL is done or `timeout` passed; true when done.
    func waitFinished(timeout: Duration) -> Bool {
        if isFinished { return true }
        guard done.wait(timeout: .now() + timeout.inSeconds) == .success else { return false }
        done.signal()   // the next waiter (a later load) finds it done too
        return true
    }
}
