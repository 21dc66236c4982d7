import GStreamer
import Synchronization

/// Frames reaching a view's video sink: how many since the watch was last rearmed, how long they last, and whether
/// the media loaded now has shown any video at all. Written by the sink pad's probe on its streaming thread, read
/// by the watch; one `Mutex` owns it. It keeps no time of its own: the silence is measured on the watch's
/// (injected) clock.
final class VideoFlow: Sendable {
    struct Snapshot: Sendable, Equatable {
        /// Increments at each `rearm`.
        var rearms = 0
        /// Frames since the last `rearm`.
        var arrivals = 0
        var frameDuration: Duration = .milliseconds(40)
        /// A frame reached the sink since the media was loaded (`mediaLoaded`): the view has video, so a rearm
        /// that no frame follows is silence too (audio-only media never sets it).
        var hasVideo = false
    }
    private let state = Mutex(Snapshot())

    func arrived(frameDuration: ClockTime?) {
        state.withLock {
            $0.arrivals &+= 1
            $0.hasVideo = true
            if let frameDuration, frameDuration.nanoseconds > 0 {
                $0.frameDuration = .nanoseconds(Int64(frameDuration.nanoseconds))
            }
        }
    }

    /// Forgets the frames so far: a new silence is counted from now on.
    func rearm() { state.withLock { $0.rearms &+= 1; $0.arrivals = 0 } }

    /// New media: whether it has video is not known until its first frame.
    func mediaLoaded() { state.withLock { $0.rearms &+= 1; $0.arrivals = 0; $0.hasVideo = false } }

    var snapshot: Snapshot { state.withLock { $0 } }
}

/// How long video has been silent, from snapshots of a `VideoFlow` taken at the watch's ticks. Pure.
///
/// Silence counts from the tick that saw the last frame. After a rearm (a PLAYING, a seek, a coordinated start)
/// the frames before it no longer count, and for a view that has shown video the silence then counts from the
/// first tick at which it was watched (playing, see `PlayerStateMachine.watchesVideoFlow`) — not from the next
/// frame: a view whose source stopped before the rearm gets no next frame, and measured from it its silence never
/// began (it stayed "playing" with a frozen picture). Not from the rearm itself either: a coordinated start or a
/// pause rearms and then waits, unwatched, and that wait is not silence.
struct VideoSilenceTracker: Sendable, Equatable {
    private var rearms: Int?
    private var arrivals = 0
    /// The tick the silence counts from; nil: not counting (no frame yet, or not watched since the rearm).
    private var since: Duration?

    /// The silence at `time` (any origin, the watch's clock), nil while it is not counted. `watching`: whether
    /// silence means starvation now.
    mutating func observe(_ flow: VideoFlow.Snapshot, at time: Duration, watching: Bool) -> Duration? {
        if flow.rearms != rearms {
            rearms = flow.rearms
            arrivals = 0
            since = nil
        }
        if flow.arrivals != arrivals {
            arrivals = flow.arrivals
            since = time
        } else if since == nil && watching && flow.hasVideo {
            since = time
        }
        return since.map { time - $0 }
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
/// a snapshot of the video flow, with the tick's time since the watch began, to `tick` (the player, which owns the
/// `VideoSilenceTracker` and knows whether it watches), until `tick` returns false (its player is gone) or the
/// task is cancelled.
enum VideoStarvationWatch {
    static let interval: Duration = .milliseconds(100)

    static func start(flow: VideoFlow, clock: any _Concurrency.Clock<Duration>, on executor: (any TaskExecutor)? = nil,
                      tick: @escaping @Sendable (_ flow: VideoFlow.Snapshot, _ time: Duration) async -> Bool) -> Task<Void, Never> {
        Task(executorPreference: executor) { await run(flow: flow, clock: clock, tick: tick) }
    }

    static func run<C: _Concurrency.Clock<Duration>>(flow: VideoFlow, clock: C,
                                        tick: @Sendable (_ flow: VideoFlow.Snapshot, _ time: Duration) async -> Bool) async {
        let origin = clock.now
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            guard await tick(flow.snapshot, origin.duration(to: clock.now)) else { return }
        }
    }
}
