import Clocks
import Coordination
import GStreamer
import XCTest

/// A participant that joins while a barrier prepares the group's start (issue 17: a member joining a host whose
/// views were still starting got "prepare at 0", "pause at 0" and stayed paused while the group played). Fake
/// participants on a test clock: no pipeline, no daemon.
final class LateJoinDuringStartTests: XCTestCase {
    /// c connects after the barrier took its participants (a and b, both still preparing) and joins then: it must
    /// not be paused at the barrier's target (nobody would start it), but put on the group's timeline once the
    /// start has its instant.
    func testAJoinerDuringTheStartIsCaughtUpOnceTheGroupRunsNeverLeftPaused() async throws {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        for target in group.targets { target.closeGate() }
        let proposer = group.coordinators[0]
        let play = Task { try await proposer.coordinatePlay() }
        await until("a and b are asked to prepare") { group.targets.allSatisfy { $0.waitingAtGate == 1 } }

        let late = try await group.add("c")
        let medium = group.medium
        let joiner = group.coordinators[2]
        let join = Task { try await joiner.join() }
        await until("c's join reached the medium (waiting for the start, or answered at once)") {
            await medium.joinersWaitingForStart(of: "event") == 1 || !late.commands.isEmpty
        }
        XCTAssertEqual(late.pauses, [], "c was paused at the target of a start that does not include it")
        XCTAssertEqual(late.buffers, [], "c prepared before the group had an instant to aim at")

        for target in group.targets.prefix(2) { target.openGate() }
        try await play.value
        try await join.value
        let state = try unwrap(await medium.groupState(for: "event"))
        let anchor = try unwrap(state.anchorClock)
        XCTAssertTrue(state.isPlaying)
        XCTAssertEqual(group.targets[0].startedAt, [anchor])
        // c aimed at where the group would be and started exactly when the group got there.
        let start = try unwrap(late.plays.last, "c was never told to play: \(late.commands)")
        XCTAssertEqual(late.pauses, [], "c was paused: \(late.commands)")
        XCTAssertEqual(late.startedAt, [start.at])
        XCTAssertGreaterThan(start.at, anchor)
        XCTAssertEqual(state.mediaTime(at: start.at), start.item, "c's start is off the group's timeline")
        XCTAssertEqual(late.buffers, [start.item])
        let ready = await medium.participants().map(\.isReady)
        XCTAssertEqual(ready, [true, true, true])
        let stillWaiting = await medium.joinersWaitingForStart(of: "event")
        XCTAssertEqual(stillWaiting, 0)
    }

    /// c was connected before the barrier began, so the barrier prepares and starts it; its join, arriving while
    /// the barrier prepares, then has nothing left to do (it is not prepared a second time nor paused).
    func testAJoinerTheStartIncludesIsStartedOnceByIt() async throws {
        var group = FakeGroup()
        for id in ["a", "b", "c"] { try await group.add(id) }
        for target in group.targets { target.closeGate() }
        let proposer = group.coordinators[0]
        let play = Task { try await proposer.coordinatePlay() }
        await until("all three are asked to prepare") { group.targets.allSatisfy { $0.waitingAtGate == 1 } }
        let medium = group.medium
        let joiner = group.coordinators[2]
        let join = Task { try await joiner.join() }
        let c = group.targets[2]
        await until("c's join reached the medium") {
            await medium.joinersWaitingForStart(of: "event") == 1 || c.commands.count > 1
        }
        for target in group.targets { target.openGate() }
        try await play.value
        try await join.value
        let anchor = try unwrap(await medium.groupState(for: "event")?.anchorClock)
        XCTAssertEqual(c.buffers, [.zero], "c prepared again: \(c.commands)")
        XCTAssertEqual(c.pauses, [])
        XCTAssertEqual(c.startedAt, [anchor])
    }

    /// While the barrier prepares a *pause*, a joiner joins paused at its time at once (the group ends paused there).
    func testAJoinerDuringAPauseJoinsPausedAtOnce() async throws {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        try await group.coordinators[0].coordinatePlay()
        await group.clock.advance(by: .seconds(3))
        for target in group.targets { target.closeGate() }
        let pauser = group.coordinators[0]
        let pause = Task { try await pauser.coordinatePause() }
        await until("a and b are asked to prepare the pause") { group.targets.allSatisfy { $0.waitingAtGate == 1 } }
        let target = try unwrap(await group.medium.groupState(for: "event"))
        XCTAssertFalse(target.isPlaying, "the barrier's target is the pause")
        let late = try await group.add("c")
        try await group.coordinators[2].join()
        XCTAssertEqual(late.buffers, [target.anchorMedia])
        XCTAssertEqual(late.pauses, [target.anchorMedia])
        XCTAssertEqual(late.plays.count, 0)
        for target in group.targets.prefix(2) { target.openGate() }
        try await pause.value
    }
}

/// A join that founds the group (no group state yet) while another participant's first play comes: the play
/// supersedes the founding barrier, and the join ends on the play's start instead of failing with `superseded`.
final class FoundingJoinTests: XCTestCase {
    func testAJoinFoundingTheGroupThatAPlaySupersedesEndsOnThePlaysStart() async throws {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        for target in group.targets { target.closeGate() }
        let joiner = group.coordinators[1]
        let join = Task { try await joiner.join() }
        await until("the founding barrier asks both to prepare") { group.targets.allSatisfy { $0.waitingAtGate == 1 } }
        let player = group.coordinators[0]
        let play = Task { try await player.coordinatePlay() }
        await until("the play asks both to prepare too") { group.targets.allSatisfy { $0.waitingAtGate == 2 } }
        for target in group.targets { target.openGate() }
        try await play.value
        do {
            try await join.value
        } catch {
            XCTFail("the join failed: \(error)")
        }
        let state = try unwrap(await group.medium.groupState(for: "event"))
        let anchor = try unwrap(state.anchorClock)
        XCTAssertTrue(state.isPlaying)
        for target in group.targets {
            XCTAssertEqual(target.startedAt, [anchor], "\(target.commands)")
            XCTAssertEqual(target.pauses, [], "paused by the superseded founding: \(target.commands)")
        }
    }
}
