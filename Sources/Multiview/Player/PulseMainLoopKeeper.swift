import GStreamer
import Synchronization

/// Keeps GStreamer's PulseAudio main loop alive for the life of the process: one pulsesink of our own, held at
/// READY and never used for anything else.
///
/// Why (issue 15; the abort `Assertion 'm' failed at pulse/thread-mainloop.c … pa_threaded_mainloop_lock()` in
/// `AudioReplacementRaceTests` on an `aqueue:src` thread, and, we believe, the soak's glibc abort on a main-loop
/// mutex, `FUTEX_OWNER_DIED`): every pulsesink of a process shares one `pa_threaded_mainloop`, a static of the
/// plugin. pulsesink counts the sinks at READY or above; the one whose READY→NULL brings the count to 0 stops
/// and frees the loop and sets the static to NULL. Other threads read that static without holding a count: a
/// caps or accept-caps query from upstream reaches a sink's query handler even while the sink goes to NULL
/// (non-serialised queries pass a flushing pad), and the handler locks the loop it read a moment before. The
/// player takes sinks to NULL often while upstream runs: a stream that is lost or replaced, the outage poll's
/// probe sink every second (`AudioOutput.pulseAudioTakesStreams`), a replacement abandoned. Whenever that sink
/// was the process's last, the loop was freed under a thread about to lock it.
///
/// With the keeper at READY the count never reaches 0 again, so the loop is never freed. The keeper needs a
/// daemon once, to reach READY (GstAudioBaseSink opens its connection there); without one it is tried again at
/// the next stream or probe (`ensure()`), and until then no pulsesink of ours reached READY either, so there is
/// no loop to lose. It connects under the views' client name for that daemon, so it shares their connection
/// (pulsesink shares one per client name) and makes no stream. A connection of its own, tried first, was followed
/// by wider by-ear skews between two views (`PulseAudioCoordinationTests`, 8 runs each: medians up to 2.06 ms with
/// it, up to 1.46 without; cause not found). If the daemon dies, that connection stays failed, and views made
/// afterwards connect under the next daemon's name (`PulseConnectionName`): the keeper holds only the loop.
///
/// Owner: the `Mutex` below; `ensure()` is called from any thread (the player's queue, the audio output
/// supervisor). A state change to READY is a blocking connect (a few ms locally); it runs under the lock so that
/// two callers do not both make a keeper.
public enum PulseMainLoopKeeper {
    private static let keeper = Mutex<Element?>(nil)

    /// Whether the keeper holds the loop now.
    public static var isHolding: Bool { keeper.withLock { $0 != nil } }

    /// Brings the keeper to READY if it is not there yet. Returns whether it holds the loop after the call.
    @discardableResult
    public static func ensure() -> Bool {
        keeper.withLock { kept in
            if kept != nil { return true }
            guard let sink = try? Element(factory: "pulsesink", name: "mainloop-keeper") else { return false }
            do {
                // The views' own connection name for the daemon answering now (`PulseConnectionName`): the keeper
                // shares their connection instead of opening one of its own.
                try sink.set("client-name", PulseConnectionName.name(for: PulseServerInstance.probe()))
                try sink.setState(.ready)
            } catch {
                // No daemon answers now (or pulsesink is missing): no sink of ours is at READY either. Tried again
                // at the next stream or probe.
                do { try sink.setState(.null) } catch {
                    // A sink that never opened has nothing to close; the answer stands.
                }
                return false
            }
            kept = sink
            return true
        }
    }
}
