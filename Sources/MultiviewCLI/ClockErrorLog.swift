import Foundation
import GStreamer
import Multiview
import Synchronization

/// `join --clock-log FILE` (Scripts/bench-network): the member's net clock against this machine's monotonic clock,
/// sampled every 20 ms, written as "monotonic_ns,netclock_ns" lines when the member ends. Members in network
/// namespaces of one machine share CLOCK_MONOTONIC (the host's clock too), so netclock − monotonic is the member
/// clock's true error: the bench sets it beside what is heard, to tell the clock's part of the audible error from
/// the audio output's.
///
/// With `follow(_:)`, the view's `AudioClockFollower` too: a "follower,…" line whenever its statistics change
/// (a correction, a discontinuity), so a step in what is heard can be matched with what the follower did.
///
/// Threading: one plain thread samples the clocks (it sleeps: never on the cooperative pool); one task per followed
/// view polls its player (an actor) every 20 ms; the samples, the follower lines and the stop flag are owned by one
/// `Mutex`.
final class ClockErrorLog: Sendable {
    private struct State {
        var samples: [(monotonic: UInt64, clock: UInt64)] = []
        var followerLines: [String] = []
        var pollers: [Task<Void, Never>] = []
        var stopped = false
    }
    /// The state, in a box the sampling thread and the pollers share (a `Mutex` itself cannot be captured).
    private final class Shared: Sendable {
        let state = Mutex(State())
    }
    private let shared = Shared()
    private let path: String

    /// Starts sampling `clock` against the system (monotonic) clock; read at each sample, so that a member whose
    /// host came back is sampled on its new link's net clock, not on the first one, left without a provider.
    init(clock: @escaping @Sendable () -> Clock, path: String) {
        self.path = path
        let system = Clock.systemClock()
        let shared = self.shared
        let thread = Thread {
            while true {
                let monotonic = system.time.nanoseconds
                let reading = clock().time.nanoseconds
                let stopped = shared.state.withLock { s in
                    if !s.stopped { s.samples.append((monotonic, reading)) }
                    return s.stopped
                }
                if stopped { return }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        thread.name = "multiview-clock-log"
        thread.start()
    }

    /// Records each change of `player`'s audio follower statistics as
    /// "follower,VIEW,MONOTONIC_NS,CORRECTIONS,LAST_CORRECTION_NS,DISCONTINUITIES,MISPLACEMENTS,STALLS,LAST_MEDIAN_NS,
    /// LAST_DISCONTINUITY_REASON,SMOOTHER_ERROR_NS" (the last libpulse smoother error its `PulseTimingTap` removed,
    /// empty without a tap).
    func follow(_ player: Player) {
        let system = Clock.systemClock()
        let shared = self.shared
        let view = player.view.number
        let poller = Task {
            var last: AudioClockFollower.Statistics?
            while !Task.isCancelled {
                if let now = await player.audioClockStatistics, now != last {
                    last = now
                    func ns(_ d: Duration) -> Int64 { d.components.seconds * 1_000_000_000 + d.components.attoseconds / 1_000_000_000 }
                    let line = "follower,\(view),\(system.time.nanoseconds),\(now.corrections),\(ns(now.lastCorrection)),"
                        + "\(now.discontinuities),\(now.misplacements),\(now.stalls),\(now.lastMedianSkew.map(ns).map(String.init) ?? ""),"
                        + (now.lastDiscontinuity?.rawValue ?? "") + ","
                        + (await player.audioTimingTapStatistics.map { String($0.lastSmootherError) } ?? "")
                    shared.state.withLock { $0.followerLines.append(line) }
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        shared.state.withLock { $0.pollers.append(poller) }
    }

    /// Stops sampling and writes the file; the error names it.
    func finish() throws {
        let (samples, followerLines, pollers) = shared.state.withLock { s in
            s.stopped = true
            return (s.samples, s.followerLines, s.pollers)
        }
        for poller in pollers { poller.cancel() }
        let text = (samples.map { "\($0.monotonic),\($0.clock)" } + followerLines).joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}
