import GStreamer
import Synchronization

/// The "all ready → start" step of one barrier, taken by the last participant to get ready, on its own thread,
/// the moment it is ready: it chooses the instant (now + margin) and runs every participant's prepared start in
/// one real-time section. Waiting for the medium actor to notice the last readiness instead (the participant's
/// answer travelling back through its coordinator and the medium's task group, on the two-thread cooperative
/// pool that every player's bus handling also uses) cost 0.3–3.7 ms before the margin even began.
///
/// It fires only when every expected participant arrived with a prepared start; otherwise (a participant without
/// one, a failure, a timeout) the medium starts the group as before. `cancel` stops it for good and says whether it
/// had fired: the medium calls it once the prepare phase is over, and when a newer command supersedes the barrier.
///
/// Threading: one `Mutex`, held while firing (~0.3 ms), so a cancel never interleaves with a start.
final class StartBarrier: Sendable {
    struct Fired: Sendable {
        var start: ClockTime
        /// How long before the instant the last prepared start was done.
        var lead: Duration
    }

    private struct State {
        var waitingFor: Set<ParticipantID>
        var starts: [ParticipantID: any PreparedStart] = [:]
        /// Some participant has no prepared start, or the group is not to start (a paused barrier).
        var unable: Bool
        var cancelled = false
        var fired: Fired?
    }

    private let state: Mutex<State>
    private let clock: any PipelineTimeSource
    private let margin: Duration

    /// `fires` false: only collects the prepared starts (a barrier that ends paused).
    init(expecting participants: [ParticipantID], clock: any PipelineTimeSource, margin: Duration, fires: Bool = true) {
        state = Mutex(State(waitingFor: Set(participants), unable: !fires))
        self.clock = clock
        self.margin = margin
    }

    /// A participant is ready, with the start it prepared (nil: it has none, so the barrier cannot fire).
    func arrive(_ id: ParticipantID, start: (any PreparedStart)?) {
        state.withLock { state in
            guard !state.cancelled, state.fired == nil, state.waitingFor.remove(id) != nil else { return }
            if let start { state.starts[id] = start } else { state.unable = true }
            guard state.waitingFor.isEmpty, !state.unable else { return }
            state.fired = Self.startAll(state.starts.sorted { $0.key < $1.key }.map(\.value), clock: clock, margin: margin)
        }
    }

    /// Chooses the instant (now + margin) and runs every start for it, in one real-time section: choosing the
    /// instant at normal priority and starting later let decoders pre-empt the gap (up to 1.5 ms). Used when the
    /// barrier fires, and by the medium when it did not.
    static func startAll(_ starts: [any PreparedStart], clock: any PipelineTimeSource, margin: Duration) -> Fired {
        RealtimeSection.run {
            let start = clock.time + ClockTime(margin)
            for prepared in starts { _ = prepared.start(at: start) }
            return Fired(start: start, lead: .nanoseconds(Int64(start.nanoseconds) - Int64(clock.time.nanoseconds)))
        }
    }

    /// Stops the barrier from firing from now on; what it did if it had fired, and the prepared starts that
    /// arrived (for the medium to run itself when it did not fire).
    @discardableResult
    func cancel() -> (fired: Fired?, starts: [ParticipantID: any PreparedStart]) {
        state.withLock { state in
            state.cancelled = true
            return (state.fired, state.starts)
        }
    }
}
