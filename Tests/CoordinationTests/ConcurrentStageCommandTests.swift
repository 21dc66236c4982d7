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
        func analysis(views: Set<Int>, from: UInt64, to: UInt64) -> SyncSummary {
            let frames = recorder.frames.filter { views.contains($0.view) && $0.renderClockNs >= from && $0.renderClockNs <= to }
            return SyncAnalyzer.analyze(frames: frames, phases: [PhaseRecord(index: 0, name: "all", commandClockNs: from, endClockNs: to)],
                                        mode: "coordinated").summary
        }

        let first = try await addView(Media.angles[0])
        _ = try await addView(Media.angles[1])
        try await stage.start(players)
        try await Task.sleep(for: .seconds(3))

        // r 1: view 1 goes back 5 s and plays at 2× until it has caught up (about 5 s).
        let replay = Task { try await stage.whatHappened(first) }
        _ = await eventually(timeout: .seconds(5)) { await first.rate == 2 }
        let replayRunning = await first.rate
        XCTAssertEqual(replayRunning, 2, "view 1 is replaying at 2× when the add arrives")

        // add: view 3 joins while view 1 is still suspended.
        let third = try await addView(Media.angles[2])
        try await stage.join(third)
        let joinedNs = clock.time.nanoseconds
        // Until views 2 and 3 have rendered the frames judged below (10 s limit), not a fixed 1.5 s.
        _ = await eventually(timeout: .seconds(10)) {
            analysis(views: [2, 3], from: joinedNs + 300_000_000, to: clock.time.nanoseconds).frames > 20
        }
        let duringNs = clock.time.nanoseconds
        let stillSuspended = await stage.coordination(for: first)?.coordinator.suspensionReasons ?? []
        XCTAssertEqual(stillSuspended, [.whatHappened], "the add did not end view 1's replay early")
        let others = analysis(views: [2, 3], from: joinedNs + 300_000_000, to: duringNs)
        XCTAssertEqual(others.views, 2)
        XCTAssertGreaterThan(others.frames, 20, "views 2 and 3 play together during the replay")
        XCTAssertLessThan(try XCTUnwrap(others.p99SkewMs), 10, "the joiner is aligned with view 2 during the replay")

        // The replay ends by itself; then all three views play aligned.
        try await withDeadline(.seconds(20)) { try await replay.value }
        let rejoinedNs = clock.time.nanoseconds
        _ = await eventually(timeout: .seconds(10)) {
            analysis(views: [1, 2, 3], from: rejoinedNs + 300_000_000, to: clock.time.nanoseconds).frames > 20
        }
        let all = analysis(views: [1, 2, 3], from: rejoinedNs + 300_000_000, to: clock.time.nanoseconds)
        XCTAssertEqual(all.views, 3)
        XCTAssertGreaterThan(all.frames, 20)
        XCTAssertLessThan(try XCTUnwrap(all.p99SkewMs), 10, "all three aligned after view 1 rejoined")
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
