import Foundation
import Synchronization
import Coordination
import GStreamer
import Multiview
import SyncAnalysis

/// One action of a sync-report script.
public enum SyncScriptAction: Sendable, Equatable, CustomStringConvertible {
    case play, pause, resume
    case seekBy(Double)
    case rate(Double)
    /// Add a view while the group plays (late join).
    case join
    /// Suspend view N, move it away locally, then end the suspension (rejoin at the group's time).
    case suspend(view: Int)
    /// Starve view N's video for a while (its frames stop arriving), as a stall, then let it recover.
    case stall(view: Int)
    case wait(Double)

    public var description: String {
        switch self {
        case .play: return "play"
        case .pause: return "pause"
        case .resume: return "resume"
        case .seekBy(let s): return s >= 0 ? "seek +\(SyncScriptAction.format(s))" : "seek \(SyncScriptAction.format(s))"
        case .rate(let r): return "rate \(r)"
        case .join: return "late join"
        case .suspend(let n): return "suspend \(n)"
        case .stall(let n): return "stall \(n)"
        case .wait(let s): return "wait \(SyncScriptAction.format(s))"
        }
    }
    /// Whether the action makes every view flush (so its frames change timeline at its next segment event):
    /// seeks and rate changes always do; coordinated play/resume do too, because every coordinated start
    /// buffers at the group's time with a flushing seek.
    func flushesEveryView(coordinated: Bool) -> Bool {
        switch self {
        case .seekBy, .rate: return true
        case .play, .resume: return coordinated
        case .pause, .join, .suspend, .stall, .wait: return false
        }
    }

    static func format(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }

    /// Parses one script line ("seek +10", "rate 2.0", "wait 3", "suspend 2", "stall 3", "late join", …).
    public static func parse(_ line: String) -> SyncScriptAction? {
        let words = line.lowercased().split(separator: " ").map(String.init)
        guard let first = words.first else { return nil }
        switch (first, words.count) {
        case ("play", 1): return .play
        case ("pause", 1): return .pause
        case ("resume", 1): return .resume
        case ("join", 1): return .join
        case ("late", 2) where words[1] == "join": return .join
        case ("seek", 2): return Double(words[1]).map { .seekBy($0) }
        case ("rate", 2): return Double(words[1]).flatMap { $0 > 0 ? .rate($0) : nil }
        case ("wait", 2): return Double(words[1]).flatMap { $0 >= 0 ? .wait($0) : nil }
        case ("suspend", 2): return Int(words[1]).map { .suspend(view: $0) }
        case ("stall", 2): return Int(words[1]).map { .stall(view: $0) }
        default: return nil
        }
    }

    /// A script line that is no action.
    public enum SyncScriptError: Error, Sendable, Equatable, CustomStringConvertible {
        case unparsableLine(number: Int, text: String)
        public var description: String {
            switch self {
            case .unparsableLine(let n, let text): return "line \(n): cannot parse '\(text)'"
            }
        }
    }

    /// Script lines → actions; `#` starts a comment. Throws with the line number of a bad line.
    public static func parseScript(_ text: String) throws -> [SyncScriptAction] {
        var actions: [SyncScriptAction] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if line.isEmpty { continue }
            guard let action = parse(line) else {
                throw SyncScriptError.unparsableLine(number: n + 1, text: line)
            }
            actions.append(action)
        }
        return actions
    }

    /// Fits the bundled 24 s clips: media time stays between 0 and ~21 s, so no view reaches its end.
    public static let defaultScript: [SyncScriptAction] = [
        .play, .wait(3), .pause, .wait(1), .resume, .wait(2), .seekBy(-5), .wait(2), .seekBy(10), .wait(2),
        .rate(2.0), .wait(1.5), .rate(1.0), .wait(2), .seekBy(-10), .wait(2), .join, .wait(2),
        .suspend(view: 2), .wait(2), .stall(view: 1), .wait(2),
    ]
}

/// Runs views headless through a script, coordinated (one medium) or as the uncoordinated baseline (separate
/// pipelines started one after another, commands sent one by one), recording every rendered frame.
public final class SyncReportRunner: Sendable {
    public struct Output: Sendable {
        public var frames: [FrameRecord]
        public var phases: [PhaseRecord]
        /// One line per phase that failed (which phase, and why); the run goes on to the next phase.
        public var failures: [String]
    }

    /// The one item all sync-report views play (a suspended view is marked apart while detached).
    static let item = "sync-report"

    public let files: [String]
    public let coordinated: Bool
    public let actions: [SyncScriptAction]
    /// Baseline runs: phase index → the seek target of the coordinated run (`PhaseRecord.seekTargetNs`), so the
    /// baseline's views seek to the same media times (where a target falls in its GOP decides how much a seek
    /// decodes). Phases without one seek relative to each view's own position.
    public let seekTargets: [Int: UInt64]
    private let log: @Sendable (String) -> Void

    /// `files` are cycled over `views` views (9 views of 4 angles → angles repeat); `joinFile` is the media of
    /// the late joiner.
    public init(files: [String], coordinated: Bool, actions: [SyncScriptAction], seekTargets: [Int: UInt64] = [:],
                log: @escaping @Sendable (String) -> Void) {
        self.files = files
        self.coordinated = coordinated
        self.actions = actions
        self.seekTargets = seekTargets
        self.log = log
    }

    public func run(views count: Int) async throws -> Output {
        let medium = PlaybackCoordinationMedium()
        let clock = medium.clock
        let recorder = SyncRecorder(clock: clock)
        let item = SyncReportRunner.item
        var players: [Player] = []
        var coordinations: [PlayerCoordination] = []
        var failures: [String] = []
        let sources = SourceElements()

        func addView(_ number: Int) async throws -> (Player, PlayerCoordination?) {
            let source = MediaSource(files[(number - 1) % files.count])
            let player = try Player(configuration: PlayerConfiguration(
                view: ViewIdentity(number: number, name: source.displayName), video: .fakeSink, audio: .fakeSink))
            var made: PlayerCoordination?
            if coordinated {
                let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: item)
                try await coordination.coordinate(using: medium)
                coordinations.append(coordination)
                made = coordination
            } else {
                // The baseline still records on the same clock, so both runs are measured alike.
                player.measure(on: clock)
            }
            sources.watch(player)
            try await player.load(source)
            try recorder.attach(player, item: item)
            players.append(player)
            return (player, made)
        }

        for n in 1...count { _ = try await addView(n) }
        var phases: [PhaseRecord] = []
        var phaseIndex = -1
        var lastTiming: PlaybackCoordinationMedium.BarrierTiming?
        func beginPhase(_ name: String, flushes: Bool) {
            let now = clock.time.nanoseconds
            if let last = phases.indices.last { phases[last].endClockNs = now }
            phaseIndex += 1
            recorder.setPhase(phaseIndex, untilNewSegment: flushes)
            phases.append(PhaseRecord(index: phaseIndex, name: name, commandClockNs: now, endClockNs: now))
            if !coordinated { phases[phases.count - 1].viewCommandClockNs = [:] }
        }

        for action in actions {
            if case .wait(let s) = action {
                try await Task.sleep(for: .milliseconds(Int(s * 1000)))
                continue
            }
            beginPhase(action.description, flushes: action.flushesEveryView(coordinated: coordinated))
            log("phase \(phaseIndex): \(action)")
            do {
                // A late joiner is appended to `players`/`coordinations`: the next actions see it.
                try await perform(action, players: players, coordinations: coordinations, recorder: recorder,
                                  sources: sources, addView: { try await addView(players.count + 1) },
                                  phase: phaseIndex,
                                  viewCommanded: { view in
                                      phases[phases.count - 1].viewCommandClockNs?[String(view)] = clock.time.nanoseconds
                                  },
                                  seekTarget: { phases[phases.count - 1].seekTargetNs = $0.nanoseconds })
            } catch {
                // Any failure (a player's, the medium's, a recorder's) costs its phase only: the report is still
                // written, and the CLI exits 1 naming it.
                let line = "phase \(phaseIndex) (\(action)): \(error)"
                failures.append(line)
                log(line)
            }
            if coordinated, let timing = await medium.lastBarrierTiming, timing != lastTiming {
                lastTiming = timing
                phases[phases.count - 1].slowestPrepareMs = timing.slowestPrepare.inSeconds * 1000
                phases[phases.count - 1].startMarginMs = timing.startMargin.inSeconds * 1000
                phases[phases.count - 1].startLeadMs = timing.startLead.map { $0.inSeconds * 1000 }
                phases[phases.count - 1].startFanoutMs = timing.startFanout.map { $0.inSeconds * 1000 }
                phases[phases.count - 1].missedStart = timing.missedStart
            }
        }
        if let last = phases.indices.last { phases[last].endClockNs = clock.time.nanoseconds }
        recorder.detachAll()
        for p in players { await p.stop() }
        for c in coordinations { await c.coordinator.disconnect() }
        return Output(frames: recorder.frames, phases: phases, failures: failures)
    }

    private func perform(_ action: SyncScriptAction, players: [Player], coordinations: [PlayerCoordination],
                         recorder: SyncRecorder, sources: SourceElements,
                         addView: () async throws -> (Player, PlayerCoordination?), phase: Int,
                         viewCommanded: (Int) -> Void, seekTarget: (ClockTime) -> Void) async throws {
        let lead = players[0]
        switch action {
        case .wait:
            break
        case .play, .resume:
            if coordinated { try await lead.play() } else { for p in players { try await p.play() } }
        case .pause:
            if coordinated { try await lead.pause() } else { for p in players { try await p.pause() } }
        case .seekBy(let s):
            if coordinated {
                // What `seek(by:)` does, with the target kept for the baseline run.
                let target = await lead.seekTarget(by: s)
                seekTarget(target)
                try await lead.seek(to: target)
            } else {
                let target = seekTargets[phase].map { ClockTime(nanoseconds: $0) }
                if let target { seekTarget(target) }
                // One independent player after another, each without waiting for the previous one's seek to
                // finish (separate players' seek buttons pressed in turn).
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (i, p) in players.enumerated() {
                        viewCommanded(i + 1)
                        group.addTask {
                            if let target { try await p.seek(to: target) } else { try await p.seek(by: s) }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        case .rate(let r):
            recorder.setRate(r)
            if coordinated { try await lead.setRate(r) } else { for p in players { try await p.setRate(r) } }
        case .join:
            let (player, coordination) = try await addView()
            if let coordination {
                try await coordination.coordinator.join()
            } else {
                try await player.seek(to: await lead.position ?? .zero)
                try await player.play()
            }
        case .stall(let n):
            guard n >= 1, n <= players.count else { return }
            try await starve(view: n, player: players[n - 1], coordination: coordinated ? coordinations[n - 1] : nil,
                             recorder: recorder, sources: sources)
        case .suspend(let n):
            guard n >= 1, n <= players.count else { return }
            let player = players[n - 1]
            let suspension = coordinated
                ? await coordinations[n - 1].coordinator.beginSuspension(for: .userIsChangingCurrentTime) : nil
            recorder.setItem("suspended-\(n)", view: n)
            defer { recorder.setItem(SyncReportRunner.item, view: n) }
            // Scrub away locally, hold a moment, then come back.
            let here = await player.position ?? .zero
            try await player.seekLocally(to: .seconds(max(0, here.seconds - 3)))
            try await Task.sleep(for: .milliseconds(800))
            if let suspension {
                try await suspension.end()
            } else {
                try await player.seekLocally(to: await lead.position ?? .zero)
                try await player.playLocally()
            }
        }
    }

    /// Starves view `n`'s source: its source element's output is held for 4 s (longer than the ~1 s the view's
    /// queues hold, see `MultiqueueFloor`, plus the 0.5 s starvation limit). Nothing is suspended by hand:
    /// the view's video stops, the player reports a stall, its coordinator suspends it (`stallRecovery`) and
    /// rejoins the group when data flows again. Uncoordinated, the view just carries on from where it was.
    private func starve(view n: Int, player: Player, coordination: PlayerCoordination?,
                        recorder: SyncRecorder, sources: SourceElements) async throws {
        guard let source = sources.element(for: player), let pad = try? source.staticPad("src") else {
            log("stall \(n): the view's source element has no src pad to hold; skipped")
            return
        }
        recorder.setItem("suspended-\(n)", view: n)
        defer { recorder.setItem(SyncReportRunner.item, view: n) }
        var sawStall = false
        var hold: PadProbe? = pad.addProbe([.buffer, .blocking]) { _ in .ok }
        let release = ContinuousClock.now + .milliseconds(4000)
        while ContinuousClock.now < release {
            if let coordination, await coordination.coordinator.suspensionReasons.contains(.stallRecovery) { sawStall = true }
            try await Task.sleep(for: .milliseconds(20))
        }
        hold = nil
        withExtendedLifetime(hold) {}
        guard let coordination else { return }
        if !sawStall { log("stall \(n): the view was not suspended for stallRecovery") }
        // Wait (at most 10 s) for the automatic suspension to end and the view to play with the group again.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, await coordination.coordinator.suspensionReasons.contains(.stallRecovery) {
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = await eventuallyPlaying(player, within: .seconds(5))
    }

    private func eventuallyPlaying(_ player: Player, within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let status = await player.currentStatus
            if status.state == .playing && status.waitingToPlay == nil { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// The source element of each view's playbin3 (from its "source-setup" signal), so a script can starve it.
/// The signal comes on a streaming thread; one `Mutex`.
final class SourceElements: Sendable {
    private let state = Mutex<(elements: [ObjectIdentifier: Element], connections: [SignalConnection])>(([:], []))

    func watch(_ player: Player) {
        let key = ObjectIdentifier(player)
        let connection = try? player.watchSourceSetup { [weak self] element in
            self?.state.withLock { $0.elements[key] = element }
        }
        if let connection { state.withLock { $0.connections.append(connection) } }
    }

    func element(for player: Player) -> Element? { state.withLock { $0.elements[ObjectIdentifier(player)] } }
}

/// How long one view alone takes from a seek command (flushing, accurate, while playing) to its first frame
/// rendered at the new position: the yardstick for "seek → all playing aligned" of a coordinated group.
public enum SingleViewSeekProbe {
    /// Milliseconds per file, measured one file at a time, `repeats` seeks each (median).
    public static func measure(files: [String], seekBy seconds: Double = 5, repeats: Int = 3) async throws -> [String: Double] {
        var result: [String: Double] = [:]
        for file in Set(files).sorted() {
            let clock = Clock.systemClock()
            let recorder = SyncRecorder(clock: clock)
            let source = MediaSource(file)
            let player = try Player(configuration: PlayerConfiguration(
                view: ViewIdentity(number: 1, name: source.displayName), video: .fakeSink, audio: .fakeSink))
            player.measure(on: clock)
            try await player.load(source)
            try recorder.attach(player, item: "single")
            try await player.play()
            var samples: [Double] = []
            for attempt in 0..<repeats {
                try await Task.sleep(for: .milliseconds(600))
                recorder.setPhase(attempt + 1, untilNewSegment: true)
                let command = clock.time
                let here = await player.position ?? .zero
                let target = ClockTime.seconds(here.seconds + (attempt % 2 == 0 ? seconds : -seconds))
                try await player.seekLocally(to: target)
                let deadline = ContinuousClock.now + .seconds(5)
                while ContinuousClock.now < deadline {
                    if let first = recorder.firstFrame(inPhase: attempt + 1) {
                        samples.append(Double(first.renderClockNs &- command.nanoseconds) / 1e6)
                        break
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            recorder.detachAll()
            await player.stop()
            samples.sort()
            if !samples.isEmpty { result[source.displayName] = samples[samples.count / 2] }
        }
        return result
    }
}
