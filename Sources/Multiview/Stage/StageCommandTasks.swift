import Dispatch
import Synchronization

/// A continuation resumed once, by whichever comes first; a resume before `set` is kept for it. Owner: the Mutex.
final class ResumeOnce: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Void, Never>?, resumed: Bool)>((nil, false))
    func set(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { s -> Bool in
            if s.resumed { return true }
            s.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }
    func resume() {
        let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.resumed else { return nil }
            s.resumed = true
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume()
    }
}

/// What a stage command acts on. Commands for one target run in order, each as a task of its own, so a view that
/// does not answer (a seek waiting out its 20 s timeout) holds back only the commands for that same target — never
/// the status line, `q`, the other views or the other targets.
enum CommandTarget: Hashable, Sendable {
    /// One view's transport, uncoordinated: each view plays, pauses, seeks on its own.
    case viewTransport(Int)
    /// The coordinated group's transport (the medium orders the group's commands itself: newest wins).
    case groupTransport
    /// `audio N` / `external N`.
    case routePreference
    /// `priority N level`.
    case priority(Int)
    /// `lang N audio …` / `subs N …`.
    case language(Int)
    /// `ff N` / `rew N` / `preview N …`.
    case trickPlay(Int)
    /// `r N`.
    case whatHappened(Int)
    /// `add URI`: each addition on its own (they never wait for each other).
    case addView(Int)
    /// The tag burnt into view N's tile (status, labels, routes): only the newest matters.
    case tag(Int)
    /// Telling the routing layer a view ended or failed.
    case viewEnded(Int)
    /// `volume …` / `mute …`: one chain for every view, so two quick `mute`s toggle twice, in order.
    case volume
}

/// How one command (or one view's part of it) ended.
enum CommandResult: Sendable, Equatable {
    case done
    /// Failed, with the one line saying why.
    case failed(String)
    /// A newer command for the same target made this one moot; it was cancelled and reports nothing.
    case superseded
}

/// Which newer command makes an older one for the same target moot (pure; `CommandSupersessionTests`).
///
/// The newer command cancels the older and does not wait for it: an absolute seek, a rate, a play or pause, a
/// language, a trick-play start, a route preference or a priority is decided by the newest alone, and the layers
/// below already merge concurrent requests (the player's seek queue, the medium's command generations).
/// A relative seek (`+10` after `+10`), `r N`, `add` and a preview supersede nothing: they wait for the older
/// command of their target and then run, so two `+10` still make +20.
enum CommandSupersession {
    static func supersedes(_ newer: StageCommand, _ older: StageCommand) -> Bool {
        switch (newer, older) {
        case (.seekTo, .seekTo), (.seekTo, .seekBy): return true
        case (.rate, .rate): return true
        case (.play, .play), (.play, .pause), (.pause, .play), (.pause, .pause): return true
        case (.audioLanguage, .audioLanguage), (.subtitles, .subtitles): return true
        case (.trickPlay, .trickPlay): return true
        case (.preferAudio, .preferAudio), (.preferExternal, .preferExternal): return true
        case (.priority, .priority): return true
        case (.status, _), (.quit, _): return true   // never queued; here for completeness
        default: return false
        }
    }
}

/// The command tasks of one `Stage.run`: the newest task per target, chained so commands for one target keep their
/// order. Owner: the `Stage` actor (a value it stores and mutates only on itself). Every task is cancelled when the
/// run ends (`cancelAll`); the run never waits for them, so a task stuck in a pipeline cannot hold the shutdown.
///
/// Why not a `TaskGroup`: a group awaits every child when its scope ends, and a player call that ignores
/// cancellation (a seek waiting for its timeout) would then hold `q` for up to 20 s.
struct StageCommandTasks {
    private struct Entry {
        var id: Int
        var command: StageCommand
        var task: Task<CommandResult, Never>
    }
    private var newest: [CommandTarget: Entry] = [:]
    /// Tasks that only collect the results of others and report (one per transport command); removed when done.
    private var reporters: [Int: Task<Void, Never>] = [:]
    private var nextID = 0

    /// Starts `work` for `command` on `target`: cancels the older command of the target if `command` supersedes it,
    /// else runs after it. The returned task's result is `.superseded` when a newer command cancelled it first.
    /// `then` runs in the same task once the work ended (also when it was superseded), with the task's id: for
    /// reporting and for `finished`. `alwaysSupersede` makes the newest win whatever the commands (tags).
    @discardableResult
    mutating func start(_ command: StageCommand, on target: CommandTarget, alwaysSupersede: Bool = false,
                        _ work: @escaping @Sendable () async -> CommandResult,
                        then: @escaping @Sendable (Int, CommandResult) async -> Void = { _, _ in })
        -> (id: Int, task: Task<CommandResult, Never>) {
        nextID += 1
        let id = nextID
        let previous = newest[target]
        let supersede = alwaysSupersede || (previous.map { CommandSupersession.supersedes(command, $0.command) } ?? false)
        if supersede { previous?.task.cancel() }
        let waitFor = supersede ? nil : previous?.task
        let task = Task<CommandResult, Never> {
            var result = CommandResult.superseded
            if let waitFor { await StageCommandTasks.waitUnlessCancelled(for: waitFor) }
            if !Task.isCancelled {
                result = await work()
                if Task.isCancelled { result = .superseded }
            }
            await then(id, result)
            return result
        }
        newest[target] = Entry(id: id, command: command, task: task)
        return (id, task)
    }

    /// Waits for `task` to end, or for this task to be cancelled (a newer command superseded the waiting one),
    /// whichever comes first: `await task.value` alone would not return on cancellation. The helper task that waits
    /// for `task` lives exactly as long as `task`.
    static func waitUnlessCancelled(for task: Task<CommandResult, Never>) async {
        let resumer = ResumeOnce()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                resumer.set(continuation)
                Task {
                    _ = await task.value
                    resumer.resume()
                }
            }
        } onCancel: {
            resumer.resume()
        }
    }

    /// Forgets the target's task once it ended (if no newer one took its place).
    mutating func finished(_ target: CommandTarget, id: Int) {
        if newest[target]?.id == id { newest[target] = nil }
    }

    /// Whether any command runs for one of `targets` (toggle pause uses the intent of a command still in flight).
    func isRunning(where predicate: (CommandTarget) -> Bool) -> Bool {
        newest.keys.contains(where: predicate)
    }

    /// Waits for the user's commands running now (not tags or routing notices) to end, at most `limit`: what `s`
    /// and `q` do first, so that `+10` then `s` shows the new position, while a stuck view holds them at most `limit`.
    func settle(atMost limit: Duration) async {
        let waits: [@Sendable () async -> Void] = newest.compactMap { target, entry in
            switch target {
            case .tag, .viewEnded: return nil
            default: return { _ = await entry.task.value }
            }
        } + reporters.values.map { task in { await task.value } }
        guard !waits.isEmpty else { return }
        let resumer = ResumeOnce()
        await withCheckedContinuation { continuation in
            resumer.set(continuation)
            // Lives as long as the slowest of the tasks it waits for.
            Task {
                for wait in waits { await wait() }
                resumer.resume()
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(limit.components.seconds * 1000
                + limit.components.attoseconds / 1_000_000_000_000_000))) { resumer.resume() }
        }
    }

    /// Starts a task that reports on others (not keyed, never superseded).
    /// `body` gets the reporter's id, for `reporterFinished`.
    mutating func startReporter(_ body: @escaping @Sendable (Int) async -> Void) {
        nextID += 1
        let id = nextID
        reporters[id] = Task { await body(id) }
    }

    mutating func reporterFinished(_ id: Int) { reporters[id] = nil }

    /// Cancels every task (the run is ending). They are not awaited.
    mutating func cancelAll() {
        for entry in newest.values { entry.task.cancel() }
        for task in reporters.values { task.cancel() }
        newest = [:]
        reporters = [:]
    }
}
