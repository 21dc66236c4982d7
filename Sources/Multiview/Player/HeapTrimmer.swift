import Dispatch
import Glibc
import Synchronization

/// Gives the memory of a pipeline taken to NULL back to the system (`malloc_trim`), shortly after the NULL.
///
/// Why: a view taken down and built again (an HLS server outage, `r N`, a retried failure) frees its decoders'
/// frames and its queues' buffers, but glibc keeps freed memory in the arena of the thread that allocated it, and
/// GStreamer's streaming threads spread allocations over many arenas. Measured with four looping HLS views whose
/// server stopped for 10 s every 30 s: RSS 219 → 265 MB over 4 outages; one `malloc_trim(0)` then brought it to
/// 209 MB, so the growth was memory already freed, not a leak. The soak's criterion (RSS growth < 5 % after the
/// first 5 min) failed on exactly these steps (+16.8 %, +25–40 MB at each of its HLS outages).
///
/// When: `delay` after the first request (a pipeline's last buffers are released by other threads just after its
/// NULL), never sooner than `minimumInterval` after the previous trim; requests meanwhile share the pending trim
/// (`HeapTrimSchedule`). The trim runs on a utility queue of its own: it walks every arena and must not hold a
/// player's queue or a cooperative thread.
///
/// Threading: the schedule and the count are Mutex-owned; the trim itself runs on `queue` only.
public final class HeapTrimmer: Sendable {
    /// The process's trimmer, asked by every player whose pipeline reached NULL.
    public static let shared = HeapTrimmer(delay: .seconds(1), minimumInterval: .seconds(2)) { _ = mallocTrim?(0) }

    /// glibc's `malloc_trim`, looked up at run time: Swift's Glibc module does not import `malloc.h`, and a C library
    /// without it (musl) simply gets no trim.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    private struct State {
        var schedule: HeapTrimSchedule
        var completed = 0
    }

    private let state: Mutex<State>
    private let trim: @Sendable () -> Void
    private let queue = DispatchQueue(label: "multiview.heap-trim", qos: .utility)

    init(delay: Duration, minimumInterval: Duration, trim: @escaping @Sendable () -> Void) {
        state = Mutex(State(schedule: HeapTrimSchedule(delay: delay, minimumInterval: minimumInterval)))
        self.trim = trim
    }

    /// Trims completed so far (tests and diagnostics).
    public var completedTrims: Int { state.withLock { $0.completed } }

    /// Asks for a trim soon; requests while one is pending share it.
    public func request() {
        let now = ContinuousClock.now
        guard let at = state.withLock({ $0.schedule.request(at: now) }) else { return }
        let wait = max(.zero, now.duration(to: at))
        queue.asyncAfter(deadline: .now() + wait.inSeconds) { [self] in
            let start = ContinuousClock.now
            state.withLock { $0.schedule.trimming(at: start) }
            trim()
            state.withLock { $0.completed += 1 }
        }
    }
}

/// When the next heap trim runs (pure; `HeapTrimmer`'s decisions, tested without waiting): `delay` after a request
/// when none is pending, and never sooner than `minimumInterval` after the previous trim began. A request made while
/// a trim runs schedules the next one (what is freed meanwhile may have missed the running one).
struct HeapTrimSchedule: Sendable {
    let delay: Duration
    let minimumInterval: Duration
    private(set) var pending = false
    private(set) var lastTrim: ContinuousClock.Instant?

    init(delay: Duration, minimumInterval: Duration) {
        self.delay = delay
        self.minimumInterval = minimumInterval
    }

    /// A request at `now`: the instant to trim at, or nil when a pending trim already covers it.
    mutating func request(at now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard !pending else { return nil }
        pending = true
        let soon = now + delay
        guard let lastTrim else { return soon }
        return max(soon, lastTrim + minimumInterval)
    }

    /// The pending trim begins at `now`: the next request schedules a new one.
    mutating func trimming(at now: ContinuousClock.Instant) {
        pending = false
        lastTrim = now
    }
}
