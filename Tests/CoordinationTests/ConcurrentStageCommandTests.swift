import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import SyncBench
import TestSupport
import XCTest

/// Stage commands that overlap: `add URI` arrives while `r N` ("what happened?") is still catching up.
final class ConcurrentStageCommandTests: XCTestCase {
    func testAddWhileWhatHappenedIsCatchingUp() async throws {
        let stage = CoordinatedStage(itemIdentifier: "event")
        let clock = stage.medium.clock
        let recorder = SyncRecorder(clock: clock)
        var players: [Player] = []
        func addView(_ file: String) async throws -> Player {
            let source = MediaSource(file)
            let player = try Player(configuration: PlayerConfiguration(
                view: ViewIdentity(number: players.count + 1, name: source.displayName)))
            try await stage.attach(player, source: source)
            try await player.load(source)
            try recorder.attach(player, item: "event")
            players.append(player)
            return player
        }
        func analysis(views: Set<Int>, from: UInt64, to: UInt64) -> SyncAnalysisResult {
            let frames = recorder.frames.filter { views.contains($0.view) && $0.renderClockNs >= from && $0.renderClockNs <= to }
            return SyncAnalyzer.analyze(frames: frames, phases: [PhaseRecord(index: 0, name: "all", commandClockNs: from, endClockNs: to)],
                                        mode: "coordinated")
        }

        let first = try await addView(Media.angles[0])
        _ = try await addView(Media.angles[1])
        try await stage.start(players)
        try await Task.sleep(for: .seconds(3))

        // r 1: view 1 goes back (5 s, or to the start) and plays at 2× until it has caught up. At 2× it gains one
        // second on the group per second, so the replay cannot end sooner than the distance it went back.
        let coordinator = try XCTUnwrap(stage.coordination(for: first)).coordinator
        let suspensions = await coordinator.eventLog(clock: clock)
        let position = await first.position
        let before = try XCTUnwrap(position)
        let wentBack = min(before.seconds, 5)
        let replay = Task { try await stage.whatHappened(first) }
        _ = await eventually(timeout: .seconds(5)) { await first.rate == 2 }
        let replayRunning = await first.rate
        XCTAssertEqual(replayRunning, 2, "view 1 is replaying at 2× when the add arrives")

        // add: view 3 joins while view 1 is suspended.
        let third = try await addView(Media.angles[2])
        try await stage.join(third)
        let joinedNs = clock.time.nanoseconds
        // Until views 2 and 3 have rendered the frames judged below (10 s limit), not a fixed 1.5 s.
        _ = await eventually(timeout: .seconds(10)) {
            analysis(views: [2, 3], from: joinedNs + 300_000_000, to: clock.time.nanoseconds).summary.frames > 20
        }
        assertAligned(analysis(views: [2, 3], from: joinedNs + 300_000_000, to: clock.time.nanoseconds),
                      recorded: recorder.frames, since: joinedNs + 300_000_000, views: 2,
                      "views 2 and 3 after the add (the joiner aligned with view 2)")

        // The replay ends by itself; then all three views play aligned.
        try await withDeadline(.seconds(20)) { try await replay.value }
        let rejoinedNs = clock.time.nanoseconds
        // The add did not end the replay early: it lasted at least the distance view 1 went back (less 0.3 s for
        // the 50 ms checks and position reads). How long the add itself took on a loaded machine does not matter.
        let began = suspensions.all.first { if case .suspensionBegan(.whatHappened) = $0.value { true } else { false } }
        let ended = suspensions.all.first { if case .suspensionEnded(.whatHappened) = $0.value { true } else { false } }
        let beganNs = try XCTUnwrap(began).clockNs, endedNs = try XCTUnwrap(ended).clockNs
        let replaySeconds = Double(endedNs - beganNs) / 1e9
        let addSeconds = Double(Int64(joinedNs) - Int64(beganNs)) / 1e9
        XCTAssertGreaterThan(replaySeconds, wentBack - 0.3, "view 1 went back \(wentBack) s; its replay ended after "
                             + "\(replaySeconds) s, the add had joined \(addSeconds) s after it began")
        suspensions.stop()
        _ = await eventually(timeout: .seconds(10)) {
            analysis(views: [1, 2, 3], from: rejoinedNs + 300_000_000, to: clock.time.nanoseconds).summary.frames > 20
        }
        assertAligned(analysis(views: [1, 2, 3], from: rejoinedNs + 300_000_000, to: clock.time.nanoseconds),
                      recorded: recorder.frames, since: rejoinedNs + 300_000_000, views: 3,
                      "all three after view 1 rejoined")
        let rate = await first.rate
        XCTAssertEqual(rate, 1, "view 1 back at the group's rate")

        recorder.detachAll()
        for player in players { await player.stop() }
    }
}

/// Runs `body`, failing with a timeout instead of hanging the suite.
private func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw CancellationError()
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}
