import GStreamer
import Synchronization

/// Frames reaching a view's video sink: how many since the watch was last rearmed, and how long they last.
/// Written by the sink pad's probe on its streaming thread, read by the watch; one `Mutex` owns it. It keeps no
/// time of its own: the watch measures silence on its (injected) clock.
final class VideoFlow: Sendable {
    struct Snapshot: Sendable, Equatable {
        /// Increments at each `rearm`.
        var rearms = 0
        /// Frames since the last `rearm`.
        var arrivals = 0
        var frameDuration: Duration = .milliseconds(40)
    }
    private let state = Mutex(Snapshot())

    func arrived(frameDuration: ClockTime?) {
        state.withLock {
            $0.arrivals &+= 1
            if let frameDuration, frameDuration.nanoseconds > 0 {
                $0.frameDuration = .nanoseconds(Int64(frameDuration.nanoseconds))
            }
        }
    }

    /// Forgets the frames so far: nothing counts until the next one.
    func rearm() { state.withLock { $0.rearms &+= 1; $0.arrivals = 0 } }

    var snapshot: Snapshot { state.withLock { $0 } }
}

/// How long video has been silent, from snapshots of a `VideoFlow` taken at the watch's ticks. Pure.
struct VideoSilenceTracker: Sendable, Equatable {
    private var rearms: Int?
    private var arrivals = 0
    private var lastArrival: Duration?

    /// The silence at `time` (any origin, the watch's clock), nil while no frame has arrived since the last rearm.
    mutating func observe(_ flow: VideoFlow.Snapshot, at time: Duration) -> Duration? {
        if flow.rearms != rearms {
            rearms = flow.rearms
            arrivals = 0
            lastArrival = nil
        }
        if flow.arrivals != arrivals {
            arrivals = flow.arrivals
            lastArrival = time
        }
        return lastArrival.map { time - $0 }
    }
}

/// The starvation verdict: a playing view whose video stopped reaching the sink for the limit (at least four
/// frame durations, for slow-frame-rate media) is starved, shown as buffering so that a coordinator suspends it
/// with `stallRecovery`; frames coming again (in whatever state: a suspended view may have been paused
/// meanwhile) end it. Pure.
enum StarvationVerdict {
    static let limit: Duration = .milliseconds(500)

    /// The input for the state machine, or nil when nothing changes.
    static func judge(silence: Duration?, frameDuration: Duration, starved: Bool, watching: Bool) -> PlayerStateMachine.Input? {
        guard let silence else { return nil }
        let limit = max(StarvationVerdict.limit, frameDuration * 4)
        if starved { return silence < limit ? .videoFlowing : nil }
        return silence > limit && watching ? .videoStarved : nil
    }
}

/// Ticks every `interval` on an injected clock (`ContinuousClock` in production, a test clock in tests) and hands
/// the silence of the video flow to `verdict`, until `verdict` returns false (its player is gone) or the task is
/// cancelled.
enum VideoStarvationWatch {
    static let interval: Duration = .milliseconds(100)

    static func start(flow: VideoFlow, clock: any _Concurrency.Clock<Duration>, on executor: (any TaskExecutor)? = nil,
                      verdict: @escaping @Sendable (_ silence: Duration?, _ frameDuration: Duration) async -> Bool) -> Task<Void, Never> {
        Task(executorPreference: executor) { await run(flow: flow, clock: clock, verdict: verdict) }
    }

    static func run<C: _Concurrency.Clock<Duration>>(flow: VideoFlow, clock: C,
                                        verdict: @Sendable (_ silence: Duration?, _ frameDuration: Duration) async -> Bool) async {
        let origin = clock.now
        var tracker = VideoSilenceTracker()
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            let snapshot = flow.snapshot
            let silence = tracker.observe(snapshot, at: origin.duration(to: clock.now))
            guard await verdict(silence, snapshot.frameDuration) else { return }
        }
    }
}
