import Synchronization

/// Keeps a coordinated view's audio silent from each restart of its `AudioClockFollower` (a start, a seek, a
/// stall) until the follower has placed the stream on the clock, so that the group never hears a member's sound
/// where PulseAudio happened to start it.
///
/// Why: until the follower's start decision (its warm-up and start window: 18 rendered buffers, about 0.4 s; 28,
/// about 0.6 s, when it reads libpulse's time, see `AudioClockFollower.Settings.onGroupClock`) nothing corrects
/// where PulseAudio began playing the stream, and that start can be far off. Measured across processes
/// (`Scripts/bench-network`, members joining a playing host): a member's first click after its join was 5-400 ms
/// off the others' in 5 of 16 two-member runs and 118-180 ms off in 3 of 4 four-member runs, while every click
/// after the start decision was within ~2 ms. The members' clocks agreed to a few ms then; the error is the
/// stream's start. A sound heard 100 ms off and then jumping into place is worse than a moment of silence, and it
/// decides the group's audible skew.
///
/// Only coordinated views are held (`engage`): a view playing alone has no other view to be heard against, and
/// holding it would silence the first 0.4 s after every seek for nothing.
///
/// How it silences: by the volume of the view's audio sink bin (`AudioSinkBin.Parts.primer`), set to a gain so
/// small that the samples are silent but not zero-gain. Not `mute` and not volume 0: the volume element then flags
/// its buffers as gaps, and an audio base sink renders a gap buffer as a wait on the clock, without a slaving
/// report. The follower would never get the reports it needs to place the stream, and the hold would never end
/// (the first try of this, in stop 37, silenced a member for good).
///
/// Threading: `report` runs on the sink's streaming thread (or the thread that flushes it), `engage` on the
/// player's actor; all state is in one `Mutex`, and `apply` is called inside it so that two threads never set the
/// volume out of order.
public final class AudioPlacementHold: Sendable {
    /// The gain while held: -180 dB, silent in any sample format (16-bit integer samples become exact zeros) but
    /// above zero (see the type's comment for why not zero).
    static let heldGain = 1e-9

    /// Reports after which a stream still not placed is let through anyway (at 10-20 ms of audio per report,
    /// 2-4 s): a follower that cannot place the stream (reports it ignores as implausible) must not leave the view
    /// silent for good.
    static let maxHeldReports = 200

    public struct Statistics: Sendable, Equatable {
        /// Times the audio was held (from a restart of the follower until its placement).
        public var holds = 0
        /// Holds ended by `maxHeldReports` rather than by a placement.
        public var givenUp = 0
        /// Whether the audio is held now.
        public var held = false
    }

    private struct State {
        var engaged = false
        /// Placed by the follower as of its last report (a fresh stream is not).
        var placed = false
        var reportsHeld = 0
        var statistics = Statistics()
    }

    private let state = Mutex(State())
    /// Sets the gain: `true` silences the audio, `false` restores it.
    private let apply: @Sendable (_ silent: Bool) -> Void

    init(apply: @escaping @Sendable (_ silent: Bool) -> Void) {
        self.apply = apply
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Holds from now on (the view joined a group) or never (it left: its audio is heard at once).
    func engage(_ engaged: Bool) {
        state.withLock { state in
            state.engaged = engaged
            update(&state)
        }
    }

    /// After each report of the sink to the follower: whether the follower has placed the stream now.
    func report(placed: Bool) {
        state.withLock { state in
            if state.placed && !placed { state.reportsHeld = 0 }
            state.placed = placed
            if state.statistics.held { state.reportsHeld += 1 }
            update(&state)
        }
    }

    private func update(_ state: inout State) {
        var hold = state.engaged && !state.placed
        if hold && state.reportsHeld > Self.maxHeldReports {
            if state.statistics.held { state.statistics.givenUp += 1 }
            hold = false
        }
        guard hold != state.statistics.held else { return }
        state.statistics.held = hold
        if hold {
            state.statistics.holds += 1
            state.reportsHeld = 0
        }
        apply(hold)
    }
}
