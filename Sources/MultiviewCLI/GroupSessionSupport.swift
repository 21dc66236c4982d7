import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import SyncBench
import Synchronization

/// `ADDR:PORT` as typed on the command line (`--listen`, `join`).
struct SessionAddress: Sendable, Equatable {
    var host: String
    var port: Int

    static func parse(_ text: String, option: String) throws -> SessionAddress {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65_535).contains(port), colon != text.startIndex else {
            throw StageInputError.malformed(input: "\(option) \(text)", expected: "ADDR:PORT, e.g. 127.0.0.1:7654")
        }
        return SessionAddress(host: String(text[..<colon]), port: port)
    }
}

/// Wraps a stage's coordination layer for `host` and `join`: prints every group event of each view (who moved
/// the group: the originator) and, with `--render-log`, records every frame each view renders on the shared clock
/// (`SyncRecorder`) and writes them as JSON when the run ends.
///
/// Threading: immutable references; the coordinators are read through `coordinatorFor`, the event tasks are
/// owned by a `Mutex`.
final class GroupEventReporting: StageCoordination, Sendable {
    private let inner: any StageCoordination
    private let coordinatorFor: @Sendable (Player) -> PlaybackCoordinator?
    private let reporter: TerminalReporter
    private let recorder: SyncRecorder?
    private let item: String
    private let watchers = Mutex<[Task<Void, Never>]>([])
    /// Added to each view's label (a member's net clock state), nil for nothing.
    private let labelSuffix: @Sendable () -> String?
    /// Told of every view attached (a member's `--clock-log` follows their audio).
    private let attached: @Sendable (Player) -> Void

    /// `clock`: the shared clock now (a member's changes when its host comes back: `NetworkCoordinatedStage.medium`).
    init(_ inner: any StageCoordination, item: String, clock: @escaping @Sendable () -> Clock, renderLog: Bool,
         reporter: TerminalReporter,
         coordinatorFor: @escaping @Sendable (Player) -> PlaybackCoordinator?,
         labelSuffix: @escaping @Sendable () -> String? = { nil },
         attached: @escaping @Sendable (Player) -> Void = { _ in }) {
        self.inner = inner
        self.labelSuffix = labelSuffix
        self.attached = attached
        self.item = item
        self.coordinatorFor = coordinatorFor
        self.reporter = reporter
        self.recorder = renderLog ? SyncRecorder(clockSource: clock) : nil
    }

    deinit { watchers.withLock { for task in $0 { task.cancel() } } }

    func attach(_ player: Player, source: MediaSource) async throws {
        try await inner.attach(player, source: source)
        attached(player)
        guard let coordinator = coordinatorFor(player) else { return }
        let events = await coordinator.events()
        let view = coordinator.id.rawValue
        let reporter = self.reporter
        let task = Task {
            var participants: [ParticipantID]?
            for await event in events {
                // The medium re-sends the list on every readiness change: only a change of who is in is news.
                if case .participantsChanged(let list) = event {
                    guard list.map(\.id) != participants else { continue }
                    participants = list.map(\.id)
                }
                if let line = GroupEventReporting.line(event, view: view) { reporter.line(line) }
            }
        }
        watchers.withLock { $0.append(task) }
    }

    static func line(_ event: CoordinatorEvent, view: String) -> String? {
        func by(_ originator: ParticipantID?) -> String { originator.map { " by \($0)" } ?? "" }
        switch event {
        case .rateChanged(let rate, let originator, _):
            return "group: \(view) rate \(rate)\(by(originator))"
        case .timeJumped(let time, let originator, _):
            return String(format: "group: %@ time jumped to %.3f s%@", view, time.seconds, by(originator))
        case .suspensionBegan(let reason): return "group: \(view) suspended (\(reason))"
        case .suspensionEnded(let reason): return "group: \(view) suspension ended (\(reason))"
        case .joined: return "group: \(view) joined the group's timeline"
        case .participantsChanged(let list):
            return "group: \(view) participants " + list.map(\.id.rawValue).joined(separator: ",")
        }
    }

    func start(_ players: [Player]) async throws {
        if let recorder {
            for player in players { try recorder.attach(player, item: item) }
        }
        try await inner.start(players)
    }

    func join(_ player: Player) async throws {
        try recorder?.attach(player, item: item)
        try await inner.join(player)
    }

    func label(for player: Player) async -> String? {
        let own = await inner.label(for: player)
        guard let suffix = labelSuffix() else { return own }
        return [own, suffix].compactMap { $0 }.joined(separator: ", ")
    }
    func whatHappened(_ player: Player) async throws { try await inner.whatHappened(player) }

    /// Writes the frames recorded so far (`[FrameRecord]`: view, media time, render time on the shared clock).
    func writeRenderLog(to path: String) {
        guard let recorder else { return }
        do {
            let data = try JSONEncoder().encode(recorder.frames)
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            reporter.error("--render-log \(path): \(error)")
        }
    }
}

/// Stdin for `host`: `end` ends the session for every member (then this process quits); any other line is a
/// stage command as in `play`.
enum SessionStdin {
    static func stream(reporter: TerminalReporter, onEnd: @escaping @Sendable () -> Void) -> AsyncStream<StageCommand> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.isEmpty { continue }
                    if trimmed == "end" {
                        onEnd()
                        continue
                    }
                    switch StageCommand.read(trimmed) {
                    case .success(let command): continuation.yield(command)
                    case .failure(let error): reporter.error(StageCommand.printable("\(error)"))
                    }
                }
                continuation.finish()
            }
            thread.name = "multiview-stdin"
            thread.start()
        }
    }
}
