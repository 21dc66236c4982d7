import GStreamer
import Synchronization

/// A prepared (prerolled) player's start, made ready to run without the player: starting a coordinated view
/// is setting its pipeline's base time and its sinks' state, and every view's start must land before the
/// common instant. Going through the player actor for it costs a cooperative-pool hop per view (0.2–0.6 ms each
/// on two busy cores, up to 2 ms for four views); with this object all views are started in one loop (by the
/// coordination medium's start barrier, from the last view to be ready), and the player catches up with its own bookkeeping afterwards (`Player.startCoordinated(at:)`
/// finds the start already done).
///
/// Threading: the references are immutable; `state` (prepared / started / withdrawn) is a `Mutex`, held while
/// the sinks are started so that a start and a withdrawal never interleave. GStreamer's state changes are
/// thread-safe; nothing here calls back into Swift code that takes this lock.
public final class PreparedSinkStart: Sendable {
    enum State: Equatable {
        case prepared
        /// Started for this instant; `sinksStarted` false when a sink refused (the player then starts the whole
        /// pipeline instead).
        case started(ClockTime, sinksStarted: Bool)
        case withdrawn
    }

    let pipeline: Pipeline
    let sinks: [Element]
    let clock: Clock
    let latency: ClockTime
    let audioClockGuard: AudioClockGuard?
    private let state = Mutex(State.prepared)

    init(pipeline: Pipeline, sinks: [Element], clock: Clock, latency: ClockTime, audioClockGuard: AudioClockGuard?) {
        self.pipeline = pipeline; self.sinks = sinks; self.clock = clock; self.latency = latency
        self.audioClockGuard = audioClockGuard
    }

    /// Starts the sinks so that the prepared media time is rendered at `clockTime`: base time = clockTime −
    /// latency on the pipeline and each sink, then each sink to PLAYING (the rest of the pipeline follows later,
    /// off the critical path: see `Player.completeCoordinatedStart`).
    ///
    /// Returns true when started for this instant (now or by an earlier call), false when the instant passed more
    /// than `Player.lateStartTolerance` ago (it stays prepared, to be prepared again further ahead) or when the
    /// player withdrew it. Synchronous and short (~0.05 ms per sink): callers run it in a `RealtimeSection`.
    @discardableResult
    public func start(at clockTime: ClockTime) -> Bool {
        state.withLock { state in
            switch state {
            case .started(let instant, _): return instant == clockTime
            case .withdrawn: return false
            case .prepared: break
            }
            let now = clock.time
            if now >= clockTime + ClockTime(Player.lateStartTolerance) { return false }
            let baseTime = clockTime - latency
            pipeline.startTime = nil
            pipeline.baseTime = baseTime
            audioClockGuard?.arm(after: .nanoseconds(Int64(clockTime.nanoseconds) - Int64(now.nanoseconds)))
            var sinksStarted = !sinks.isEmpty
            // A sink taken out of the pipeline since (a lost PulseAudio output replaced in its bin) stays out.
            for sink in sinks where sink.parent != nil {
                sink.setClock(clock)
                sink.baseTime = baseTime
                if (try? sink.setState(.playing)) == nil { sinksStarted = false }
            }
            state = .started(clockTime, sinksStarted: sinksStarted)
            return true
        }
    }

    /// What became of it; after this, `start(at:)` no longer starts anything.
    func withdraw() -> State {
        state.withLock { state in
            let was = state
            if state == .prepared { state = .withdrawn }
            return was
        }
    }
}
