import Coordination
import Foundation
import GStreamer
// Reaches the player's pipeline itself (its clock, sinks, state), an internal of Multiview.
@testable import Multiview
import SyncAnalysis
import Synchronization
import TestSupport
import XCTest

/// A coordinator for a playback object that is not our Player: the group's commands reach a delegate as
/// buffer / play-at-clock-time / pause, carrying the item and who asked.
final class DelegatingCoordinatorTests: XCTestCase {
    private let frame = 1.0 / 30

    func testACustomPlaybackObjectReceivesBufferPlayAndPauseAndRendersInStepWithThePlayer() async throws {
        let set = try await CoordinatedViews.make([Media.angles[0]])
        let pattern = try TestPatternTarget(view: 99, item: "event", clock: set.clock)
        let coordinator = PlaybackCoordinator(id: ParticipantID("pattern"), defaultIdentifier: "event", target: pattern)
        try await coordinator.coordinate(using: set.medium)
        XCTAssertTrue(pattern.pipeline.pipelineClock.map { $0 === set.medium.clock } ?? false, "the delegate's pipeline is not on the medium's clock")
        let viewID = set.views[0].coordinator.id

        // A group play from the Player: the delegate is asked to buffer, then to play at a clock time.
        let playNs = set.nowNs
        try await set.players[0].play()
        let started = await eventually { pattern.commands.contains { if case .play = $0.kind { true } else { false } } }
        XCTAssertTrue(started, "no play reached the delegate: \(pattern.commands)")
        var commands = pattern.commands
        XCTAssertEqual(commands.count, 2, "\(commands)")
        guard commands.count >= 2 else { return }
        guard case .buffer(let bufferTime, let bufferRate) = commands[0].kind else { return XCTFail("first: \(commands[0])") }
        guard case .play(let playTime, let playRate, let at) = commands[1].kind else { return XCTFail("second: \(commands[1])") }
        XCTAssertEqual(bufferTime, playTime)
        XCTAssertEqual(bufferTime.seconds, 0, accuracy: 0.05)
        XCTAssertEqual(bufferRate, 1)
        XCTAssertEqual(playRate, 1)
        XCTAssertGreaterThan(at.nanoseconds, playNs, "the start instant is before the command")
        XCTAssertLessThan(Double(at.nanoseconds - playNs) / 1e9, 2, "the start instant is far in the future")
        for c in commands {
            XCTAssertEqual(c.expectedItemIdentifier, "event")
            XCTAssertEqual(c.originator, viewID)
        }
        let delegateLog = await coordinator.commandLog
        XCTAssertEqual(delegateLog, commands, "the coordinator's log differs from what the delegate received")

        // It really plays, in step with the Player (same frames at the same instants).
        try await Task.sleep(for: .seconds(1.5))
        let patternPlaying = await pattern.isPlaying()
        XCTAssertTrue(patternPlaying)
        let aligned = SyncAnalyzer.analyze(frames: set.frames(since: playNs) + pattern.frames(since: playNs),
                                           phases: [], fps: 30, mode: "coordinated").summary
        print("[delegate + player] frames \(aligned.frames) p99 \(aligned.p99SkewMs ?? -1) ms")
        XCTAssertEqual(aligned.views, 2)
        XCTAssertGreaterThan(aligned.frames, 30)
        XCTAssertLessThan(try XCTUnwrap(aligned.p99SkewMs), 10)

        // A seek from the Player: buffer at the new time, then play.
        let before = pattern.commands.count
        let seekNs = set.nowNs
        try await set.players[0].seek(to: .seconds(8))
        commands = Array(pattern.commands.dropFirst(before))
        XCTAssertEqual(commands.map(\.kind), [.buffer(itemTime: .seconds(8), rate: 1),
                                              .play(itemTime: .seconds(8), rate: 1, atClockTime: playInstant(commands))],
                       "\(commands)")
        XCTAssertTrue(commands.allSatisfy { $0.originator == viewID && $0.expectedItemIdentifier == "event" })
        try await Task.sleep(for: .seconds(1))
        let position = try XCTUnwrap(pattern.pipeline.queryPosition())
        let group = try unwrap(await set.groupTime())
        XCTAssertEqual(position.seconds, group.seconds, accuracy: 0.1, "the delegate's pipeline is at \(position)")
        XCTAssertGreaterThan(position.seconds, 8.5)
        let afterSeek = SyncAnalyzer.analyze(frames: set.frames(since: seekNs + 100_000_000) + pattern.frames(since: seekNs + 100_000_000),
                                             phases: [], fps: 30, mode: "coordinated").summary
        print("[delegate + player after seek] frames \(afterSeek.frames) p99 \(afterSeek.p99SkewMs ?? -1) ms")
        XCTAssertGreaterThan(afterSeek.frames, 15)
        XCTAssertLessThan(try XCTUnwrap(afterSeek.p99SkewMs), 10)

        // A pause: the delegate is told to pause at the group's time and stops there.
        let beforePause = pattern.commands.count
        try await set.players[0].pause()
        commands = Array(pattern.commands.dropFirst(beforePause))
        guard let last = commands.last, case .pause(let pauseTime) = last.kind else {
            return XCTFail("no pause reached the delegate: \(commands)")
        }
        XCTAssertEqual(last.originator, viewID)
        let playerPosition = try unwrap(await settledPosition(set.players[0]))
        XCTAssertEqual(pauseTime.seconds, playerPosition.seconds, accuracy: frame)
        let stopped = await eventually { pattern.pipeline.currentState == .paused }
        XCTAssertTrue(stopped)
        let pausedNs = set.nowNs
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertEqual(pattern.frames(since: pausedNs).count, 0, "the delegate kept rendering after the pause")
        let pausedAt = try XCTUnwrap(pattern.pipeline.queryPosition())
        XCTAssertEqual(pausedAt.seconds, pauseTime.seconds, accuracy: frame)

        await coordinator.disconnect()
        let stillConnected = await coordinator.isConnected
        XCTAssertFalse(stillConnected)
        pattern.stop()
        await set.tearDown()
    }

    private func playInstant(_ commands: [DelegatedCommand]) -> ClockTime {
        for c in commands { if case .play(_, _, let at) = c.kind { return at } }
        return .zero
    }
}

/// A playback object that is not a playbin: a test pattern rendered by a fakesink on the medium's clock. It
/// records the commands it receives and carries them out with seeks and base times; every rendered frame is
/// recorded like the Player's (same item, its own view number), so the analyzer can compare both.
///
/// It renders the way the Player does: a queue (`vqueue`) feeds the sink on a thread of its own that only waits
/// for each frame's clock time and renders, raised to real-time priority when it starts (`RealtimeStreamThreads`,
/// as the Player's `vqueue`). With the pattern made and rendered on one ordinary thread, a loaded machine woke it
/// late: at a load average of ~18 (two CPU hogs) every other frame came 5-24 ms after the Player's (p99 skew
/// 24-42 ms) while it got "play at" on time, so the test measured the kernel's scheduling of an ordinary thread
/// against a real-time one, not the coordination.
final class TestPatternTarget: CoordinatedPlaybackTarget, Sendable {
    let pipeline: Pipeline
    private let received = Mutex<[DelegatedCommand]>([])
    private let rendered: FrameStore
    private let handoff: SignalConnection
    /// Kept while the pipeline lives: its sync handler applies the real-time policy (the stream ends with it).
    private let bus: Bus
    private let clock: Clock
    /// The start prepared by the last buffer command (nil after a pause or a new buffer).
    private let starter = Mutex<PatternStart?>(nil)

    private final class FrameStore: Sendable {
        let frames = Mutex<[FrameRecord]>([])
    }

    init(view: Int, item: String, clock: Clock) throws {
        pipeline = try Pipeline.parseLaunch(
            "videotestsrc is-live=false pattern=ball ! video/x-raw,framerate=30/1,width=160,height=90 ! " +
            "queue name=vqueue max-size-buffers=3 ! fakesink name=sink sync=true signal-handoffs=true")
        bus = pipeline.bus()
        let messages = bus.messages(realtime: RealtimeStreamThreads(owners: ["vqueue"]))
        Task.detached { for await _ in messages {} }
        guard let sink = pipeline.child(named: "sink") else { throw GStreamerError.missingElement(factory: "fakesink") }
        let store = FrameStore()
        rendered = store
        self.clock = clock
        handoff = try sink.connect("handoff") { args in
            let now = clock.time
            guard let pts = args.bufferTimestamp(at: 1) else { return }
            store.frames.withLock {
                $0.append(FrameRecord(view: view, mediaTimeNs: pts.nanoseconds, renderClockNs: now.nanoseconds,
                                      rate: 1, phase: 0, item: item))
            }
        }
    }

    var commands: [DelegatedCommand] { received.withLock { $0 } }
    func frames(since clockNs: UInt64) -> [FrameRecord] { rendered.frames.withLock { $0.filter { $0.renderClockNs >= clockNs } } }
    func stop() { _ = try? pipeline.setState(.null) }

    func adopt(clock: Clock) async throws {
        pipeline.useClock(clock)
        pipeline.startTime = nil
    }

    func releaseClock() async {
        pipeline.autoClock()
        pipeline.startTime = .zero
    }

    func perform(_ command: DelegatedCommand) async throws {
        received.withLock { $0.append(command) }
        switch command.kind {
        case .buffer(let time, let rate):
            starter.withLock { $0 = nil }
            try pipeline.setState(.paused)
            try await settle()
            try pipeline.seek(rate: rate, flags: [.flush, .accurate], position: time)
            try await settle()
        case .play(_, _, let at):
            // The medium usually ran the prepared start already; otherwise start here, unless the instant passed
            // (a late start would render the first frames late: the medium catches a missed start up instead).
            let start = starter.withLock { $0 } ?? PatternStart(pipeline: pipeline, clock: clock)
            guard start.start(at: at) else { throw CoordinationError.missedStartInstant }
        case .pause(let time):
            // Stop, and show the group's frame: the command comes a little after the group's pause instant.
            starter.withLock { $0 = nil }
            try pipeline.setState(.paused)
            try await settle()
            try pipeline.seek(rate: 1, flags: [.flush, .accurate], position: time)
            try await settle()
        }
    }

    /// Like the Player's: the buffer command's start, handed to the medium when prerolled, so that the medium
    /// starts this pipeline in the same synchronous loop as the Player's sinks instead of one "play at" message
    /// later (with "play at" alone, one run under load rendered the first frames after a seek 87 ms late; with the
    /// prepared start, 0.01-0.11 ms p99 in the same conditions).
    func prepare(_ command: DelegatedCommand, whenReady: @escaping @Sendable ((any PreparedStart)?) -> Void) async throws {
        try await perform(command)
        let start = PatternStart(pipeline: pipeline, clock: clock)
        starter.withLock { $0 = start }
        whenReady(start)
    }

    /// Sets the base time and plays, once per instant; refuses an instant that has passed. The started instant
    /// lives in a Mutex (the medium and the target may both call it).
    final class PatternStart: PreparedStart {
        let pipeline: Pipeline
        let clock: Clock
        private let started = Mutex<ClockTime?>(nil)

        init(pipeline: Pipeline, clock: Clock) { self.pipeline = pipeline; self.clock = clock }

        func start(at clockTime: ClockTime) -> Bool {
            started.withLock { started in
                if let started { return started == clockTime }
                guard clock.time < clockTime else { return false }
                let latency = pipeline.queryLatency()?.minimum ?? .zero
                pipeline.baseTime = clockTime - latency
                do { _ = try pipeline.setState(.playing) } catch { return false }
                started = clockTime
                return true
            }
        }
    }

    /// Waits (off the cooperative pool) for a pending state change or preroll to complete.
    private func settle() async throws {
        let pipeline = self.pipeline
        let result: Result<ElementState, Error> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { try pipeline.waitForState(timeout: .seconds(5)) })
            }
        }
        _ = try result.get()
    }

    func currentItemTime() async -> ClockTime? { pipeline.queryPosition() }
    func isPlaying() async -> Bool { pipeline.currentState == .playing }
    func setWaiting(_ waiting: Bool) async {}
    func setDetached(_ detached: Bool) async {}
}
