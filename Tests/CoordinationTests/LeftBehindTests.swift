import Clocks
import Coordination
import GStreamer
import Synchronization
import XCTest

/// A participant that never gets ready does not hold its group (issue 15, the soak's frozen views): the group waits
/// for it once, boundedly (`ReadinessPolicy`), then goes on and leaves it behind — suspended by the medium
/// (`coordinatedPlaybackNotPossible`), skipped by later commands — and the medium brings it back onto the group's
/// timeline once it is ready again. Fake participants on a test clock: no pipeline, no daemon, no real waiting.
final class LeftBehindTests: XCTestCase {
    /// Three participants playing; `c` will not get ready for the next command.
    private func playingGroup() async throws -> FakeGroup {
        var group = FakeGroup()
        for id in ["a", "b", "c"] { try await group.add(id) }
        try await group.coordinators[0].coordinatePlay()
        return group
    }

    /// Runs `command` and advances the test clock in `step`s until it has ended (each step only once the command has
    /// had 20 ms of real time to end without it); the test time it took.
    private func timed(_ group: FakeGroup, step: Duration = .milliseconds(250),
                       _ command: @escaping @Sendable () async throws -> Void) async -> (Duration, Error?) {
        let ended = Mutex(false)
        let task = Task {
            defer { ended.withLock { $0 = true } }
            try await command()
        }
        let began = group.clock.now
        for _ in 0..<300 where !ended.withLock({ $0 }) {
            let patience = ContinuousClock.now + .milliseconds(20)
            while !ended.withLock({ $0 }) && ContinuousClock.now < patience { await Task.yield() }
            if ended.withLock({ $0 }) { break }
            await group.clock.advance(by: step)
        }
        let result = await task.result
        let took = began.duration(to: group.clock.now)
        if case .failure(let error) = result { return (took, error) }
        return (took, nil)
    }

    func testAParticipantThatNeverGetsReadyHoldsTheGroupOnceForTheMinimumWaitThenIsSkipped() async throws {
        let group = try await playingGroup()
        let (a, b, c) = (group.targets[0], group.targets[1], group.targets[2])
        let events = await EventCollector(group.coordinators[2])
        c.stallPreparing()
        let proposer = group.coordinators[0]

        let (waited, error) = await timed(group) { try await proposer.coordinateSeek(to: .seconds(5)) }
        XCTAssertEqual(error as? CoordinationError,
                       .participantNotReady(ParticipantID("c"), .timedOut(after: waited)), "c is not named")
        XCTAssertGreaterThanOrEqual(waited, .seconds(4), "the group did not give c the minimum wait")
        XCTAssertLessThan(waited, .seconds(5), "the group waited for c longer than the minimum wait (the limit is 10 s)")
        for target in [a, b] { XCTAssertEqual(target.plays.last?.item, .seconds(5), "the others did not go on without c") }
        XCTAssertEqual(c.stalledPreparations, 1)
        var info = await group.medium.participants()
        XCTAssertEqual(info.map(\.isReady), [true, true, false])
        XCTAssertEqual(info[2].suspensionReasons, [.coordinatedPlaybackNotPossible])
        await until("c hears it was left behind") { events.transport.contains(.suspensionBegan(.coordinatedPlaybackNotPossible)) }

        // Later commands do not wait for c at all, nor reach it.
        let commandsToC = c.commands.count
        let (pauseTook, pauseError) = await timed(group) { try await proposer.coordinatePause() }
        XCTAssertNil(pauseError)
        XCTAssertEqual(pauseTook, .zero, "a pause waited for the participant left behind")
        let (seekTook, seekError) = await timed(group) { try await group.coordinators[1].coordinateSeek(to: .seconds(2)) }
        XCTAssertNil(seekError)
        XCTAssertEqual(seekTook, .zero, "a seek waited for the participant left behind")
        XCTAssertEqual(c.commands.count, commandsToC, "a group command reached the participant left behind")
        XCTAssertEqual(a.pauses.last, .seconds(2))
        info = await group.medium.participants()
        XCTAssertEqual(info[2].suspensionReasons, [.coordinatedPlaybackNotPossible])
    }

    func testTheMediumBringsBackALeftBehindParticipantOntoTheGroupsTimelineOnceItIsReady() async throws {
        let group = try await playingGroup()
        let (a, c) = (group.targets[0], group.targets[2])
        let events = await EventCollector(group.coordinators[2])
        c.stallPreparing()
        let proposer = group.coordinators[0]
        _ = await timed(group) { try await proposer.coordinateSeek(to: .seconds(5)) }
        let leftBehindAfter = c.commands.count

        // The first attempt to bring it back comes 1 s later; it hangs too (c still stalls) and holds nobody.
        for _ in 0..<30 where c.stalledPreparations < 2 {
            await group.clock.advance(by: .milliseconds(100))
            await Task.yield()
        }
        XCTAssertEqual(c.stalledPreparations, 2, "the medium did not try to bring c back")
        let (seekTook, seekError) = await timed(group) { try await proposer.coordinateSeek(to: .seconds(3)) }
        XCTAssertNil(seekError)
        XCTAssertEqual(seekTook, .zero, "a seek waited for the attempt to bring c back")
        XCTAssertEqual(a.plays.last?.item, .seconds(3))

        // c is ready again: it comes back where the group is, starting on the group's timeline.
        c.endStall()
        await until("c is ready and takes part again") {
            await group.medium.participants().map(\.isReady) == [true, true, true]
        }
        let state = try unwrap(await group.medium.groupState(for: "event"))
        XCTAssertTrue(state.isPlaying)
        let rejoin = try unwrap(c.plays.last)
        XCTAssertGreaterThan(c.commands.count, leftBehindAfter)
        XCTAssertGreaterThanOrEqual(rejoin.item, .seconds(3), "c rejoined behind the group's last seek")
        XCTAssertEqual(state.clockTime(forMedia: rejoin.item), rejoin.at, "c's start is off the group's timeline")
        XCTAssertEqual(c.startedAt.last, rejoin.at)
        let info = await group.medium.participants()
        XCTAssertEqual(info[2].suspensionReasons, [], "c still shows it was left behind")
        await until("c hears it is back") { events.transport.contains(.suspensionEnded(.coordinatedPlaybackNotPossible)) }

        // And takes part in the next command.
        try await proposer.coordinateSeek(to: .seconds(1))
        XCTAssertEqual(c.buffers.last, .seconds(1))
        XCTAssertEqual(c.plays.last?.at, a.plays.last?.at, "c did not start with the group")
    }

    func testASlowGroupThatKeepsGettingReadyIsWaitedForAndStartsTogether() async throws {
        var group = FakeGroup()
        for id in ["a", "b", "c"] { try await group.add(id) }
        for target in group.targets { target.closeGate() }
        let proposer = group.coordinators[0]
        let play = Task { try await proposer.coordinatePlay() }
        await until("all three prepare") { group.targets.allSatisfy { $0.waitingAtGate == 1 } }
        // Ready after 1 s, 3.5 s and 5 s: each within 2 s of the one before, so nobody is left behind although c
        // takes longer than the minimum wait.
        for (target, after) in zip(group.targets, [1000, 2500, 1500]) {
            await group.clock.advance(by: .milliseconds(after))
            target.openGate()
            await until("it is ready") { target.timesReady == 1 }
        }
        try await play.value
        let instants = group.targets.map(\.startedAt)
        XCTAssertEqual(instants[0].count, 1)
        XCTAssertEqual(Set(instants), [instants[0]], "not started at one instant")
        let info = await group.medium.participants()
        XCTAssertEqual(info.map(\.isReady), [true, true, true])
        XCTAssertTrue(info.allSatisfy { $0.suspensionReasons.isEmpty })
    }
}
