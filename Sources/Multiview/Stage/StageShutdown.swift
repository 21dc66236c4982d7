import Dispatch
import Foundation
import GStreamer
import Synchronization

/// What a stage does with its views when its run ends.
public enum StageTeardown: Sendable, Equatable {
    /// Every pipeline goes to NULL, each on a thread of its own (a pipeline's teardown blocks, and may hang in an
    /// element such as adaptivedemux2: never on Swift's cooperative pool), within `StageShutdown.deadline`. A view
    /// that has not stopped by then is named in one line and left behind. For a stage inside a longer-lived
    /// process (tests, an embedding app).
    case stopViews
    /// The pipelines are left as they are: the process ends right after the run (the CLI), and the kernel closes
    /// what they hold. Walking them through NULL is what crashed at exit (issue 15 row 12): GStreamer 1.22's
    /// decodebin3 dereferences an input stream it already removed (`reset_input` → `remove_input_stream(NULL)`)
    /// when a pipeline whose stream ended early (a truncated file, stalled before its EOS) goes PAUSED → READY.
    case leaveToProcessExit
}

extension Stage {
    /// Ends the views as `configuration.teardown` says. Trick play draws into the tiles, so it ends before the
    /// window closes (a sink drawing into a destroyed X window is a fatal X error); the window stays open (until
    /// the process ends) when a view could not be stopped, for the same reason.
    func tearDown() async {
        guard configuration.teardown == .stopViews else { return }
        let stoppable = views.compactMap { players[$0.number] }
        let outcome = await StageShutdown.stop(stoppable, within: StageShutdown.deadline)
        for line in outcome.errors { reporter.error(line) }
        for player in outcome.stuck {
            reporter.error("\(player.view): did not stop within \(StageShutdown.deadline) (its pipeline is stuck going from \(player.pipelineState) to NULL); left behind")
        }
        if let trickPlay = configuration.trickPlay {
            for view in views { _ = await trickPlay.stop(view: view.number) }
        }
        if outcome.stuck.isEmpty { window?.close() }
    }
}

/// Stops players off the cooperative pool with a deadline.
enum StageShutdown {
    /// How long the views get to stop, together: the CLI promises the process ends within 2 s of `q`, a signal
    /// or `--duration`, and needs the rest to print its last lines.
    static let deadline: Duration = .milliseconds(1500)

    struct Outcome {
        /// Players whose pipeline had not reached NULL (and been told so) by the deadline.
        var stuck: [Player]
        /// One line per pipeline whose state change to NULL failed.
        var errors: [String]
    }

    /// Sets every player's pipeline to NULL, each on a thread of its own, then tells the player (`stop()`, quick
    /// once the pipeline is NULL); returns when all are done or `deadline` passed, whichever comes first.
    static func stop(_ players: [Player], within deadline: Duration) async -> Outcome {
        guard !players.isEmpty else { return Outcome(stuck: [], errors: []) }
        let tracker = StopTracker(views: Set(players.map { $0.view.number }))
        for player in players {
            let thread = Thread {
                do {
                    _ = try player.pipeline.setState(.null)
                } catch {
                    tracker.error("\(player.view): stopping its pipeline: \(error)")
                }
                // The player's own bookkeeping (target state, watches): it owns that, on its actor. Tracked by
                // `tracker` and bounded by the deadline like the pipeline's teardown.
                Task {
                    await player.stop()
                    tracker.stopped(player.view.number)
                }
            }
            thread.name = "multiview-stop-\(player.view.number)"
            thread.start()
        }
        let stuck = await tracker.wait(deadline: deadline)
        return Outcome(stuck: players.filter { stuck.contains($0.view.number) }, errors: tracker.errors)
    }
}

/// Which views have stopped, and the one waiter. Owner: the `Mutex` (stop threads, the player tasks, the deadline
/// timer and the waiting task all go through it); the waiter is resumed exactly once.
final class StopTracker: Sendable {
    fileprivate struct State {
        var remaining: Set<Int>
        var errors: [String] = []
        var waiter: CheckedContinuation<Set<Int>, Never>?
        var finished = false
    }
    private let state: Mutex<State>

    init(views: Set<Int>) { state = Mutex(State(remaining: views)) }

    func error(_ line: String) { state.withLock { $0.errors.append(line) } }
    var errors: [String] { state.withLock { $0.errors } }

    func stopped(_ view: Int) {
        let resume = state.withLock { s -> (CheckedContinuation<Set<Int>, Never>, Set<Int>)? in
            s.remaining.remove(view)
            return s.remaining.isEmpty ? s.takeWaiter() : nil
        }
        resume.map { $0.0.resume(returning: $0.1) }
    }

    /// The views not stopped when all stopped (empty) or the deadline passed. The deadline is a Dispatch timer,
    /// not a cooperative-pool sleep, so it fires even while pool threads are blocked.
    func wait(deadline: Duration) async -> Set<Int> {
        await withCheckedContinuation { continuation in
            let done = state.withLock { s -> Set<Int>? in
                if s.remaining.isEmpty { s.finished = true; return [] }
                s.waiter = continuation
                return nil
            }
            if let done { return continuation.resume(returning: done) }
            let nanoseconds = deadline.components.seconds * 1_000_000_000 + deadline.components.attoseconds / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
                let resume = state.withLock { $0.takeWaiter() }
                resume.map { $0.0.resume(returning: $0.1) }
            }
        }
    }
}

extension StopTracker.State {
    /// The waiter and what it gets, once.
    fileprivate mutating func takeWaiter() -> (CheckedContinuation<Set<Int>, Never>, Set<Int>)? {
        guard !finished, let waiter else { return nil }
        finished = true
        self.waiter = nil
        return (waiter, remaining)
    }
}
