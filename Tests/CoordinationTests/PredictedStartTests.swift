import Clocks
import Coordination
import GStreamer
import TestSupport
import XCTest

/// A barrier with a predicted instant (`StartPrediction`, what a session host sets while members take part), with
/// fake participants on a test clock: the instant is chosen when the command is made and sent with "prepare", so a
/// participant ready early starts at it without waiting for the others; one ready after it is caught up.
final class PredictedStartTests: XCTestCase {
    /// a and b playing; b's first preparation took 50 ms (what the prediction counts on); a's next one is gated.
    private func playingGroup() async throws -> FakeGroup {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        group.targets[1].takePreparing(.milliseconds(50))
        try await group.coordinators[0].coordinatePlay()
        await group.medium.setStartPrediction(delivery: .milliseconds(40), roundTrip: .milliseconds(80))
        return group
    }

    func testTheInstantIsChosenAtTheCommandAndAParticipantReadyEarlyStartsThereWithoutWaiting() async throws {
        let group = try await playingGroup()
        let (a, b) = (group.targets[0], group.targets[1])
        a.closeGate()
        let commandAt = group.time.time
        let proposer = group.coordinators[1]
        let seek = Task { try await proposer.coordinateSeek(to: .seconds(5)) }
        // 40 ms delivery + 6/5 of the slowest last preparation (50 ms) + the 2 ms floor.
        let instant = commandAt + .milliseconds(40 + 60 + 2)
        // b is started while a still waits at its gate: nobody waited for a's readiness.
        await until("b started on the new timeline while a still prepares") {
            b.startedAt.count == 2 && a.waitingAtGate == 1
        }
        XCTAssertEqual(b.startedAt.last, instant)
        XCTAssertEqual(a.startedAt.count, 1, "a is not started before it is ready")
        let during = await group.medium.groupState(for: "event")
        XCTAssertEqual(during?.anchorClock, instant, "late joiners can aim at the instant while it is prepared")
        XCTAssertEqual(during?.anchorMedia, .seconds(5))

        a.openGate()
        try await seek.value
        XCTAssertEqual(a.startedAt.last, instant, "one instant for both")
        XCTAssertEqual(a.plays.last?.at, instant)
        let timing = try unwrap(await group.medium.lastBarrierTiming)
        XCTAssertTrue(timing.predicted)
        XCTAssertEqual(timing.startMargin, .milliseconds(102))
        XCTAssertEqual(timing.missedStart, 0)
        let ready = await group.medium.participants().map(\.isReady)
        XCTAssertEqual(ready, [true, true])
    }

    func testAParticipantReadyAfterTheInstantIsCaughtUpOntoTheGroupsTimeAndTheNextLeadGrows() async throws {
        let group = try await playingGroup()
        let (a, b) = (group.targets[0], group.targets[1])
        a.takePreparing(.milliseconds(300))
        let commandAt = group.time.time
        try await group.coordinators[1].coordinateSeek(to: .seconds(5))
        let instant = commandAt + .milliseconds(102)
        XCTAssertEqual(b.startedAt.last, instant)
        XCTAssertEqual(a.plays.dropLast().last?.at, instant, "a was told the instant with its prepare")
        let state = try unwrap(await group.medium.groupState(for: "event"))
        XCTAssertEqual(state.anchorClock, instant, "the group kept its instant")
        // a missed it (ready 300 ms after the command) and was caught up: started later, exactly where the group was.
        let caughtUp = try unwrap(a.startedAt.last)
        XCTAssertGreaterThan(caughtUp, instant)
        let media = try unwrap(a.plays.last?.item)
        XCTAssertEqual(state.mediaTime(at: caughtUp), media, "started on the group's timeline")
        let timing = try unwrap(await group.medium.lastBarrierTiming)
        XCTAssertEqual(timing.missedStart, 1)
        let prediction = try unwrap(await group.medium.startPrediction)
        XCTAssertEqual(prediction.extra, StartPrediction.firstExtra, "a miss makes the next lead longer")
        let ready = await group.medium.participants().map(\.isReady)
        XCTAssertEqual(ready, [true, true])
    }

    func testAPauseStaysABarrierWithoutAnInstantAndThePlayAfterItIsPredictedFromItsPreparation() async throws {
        let group = try await playingGroup()
        try await group.coordinators[0].coordinatePause()
        let paused = try unwrap(await group.medium.groupState(for: "event"))
        XCTAssertFalse(paused.isPlaying)
        XCTAssertNil(paused.anchorClock, "a pause has no instant to predict")
        for target in group.targets {
            XCTAssertEqual(target.pauses.count, 1)
            XCTAssertEqual(target.plays.count, 1, "only the first play")
        }
        // The pause's preparations took no time: the play after it counts on that.
        let commandAt = group.time.time
        try await group.coordinators[1].coordinatePlay()
        let instant = commandAt + .milliseconds(40 + 2)
        for target in group.targets { XCTAssertEqual(target.startedAt.last, instant) }
        let timing = try unwrap(await group.medium.lastBarrierTiming)
        XCTAssertTrue(timing.predicted)
    }

    /// A join's preparation overstates a seek: counting on one, the predicted lead would be longer than the whole
    /// barrier, so the command is a barrier; its preparations are measures of a group command, and predict the next.
    func testAPredictionLongerThanTheBarrierIsABarrierAndItsPreparationsPredictTheNextCommand() async throws {
        var group = FakeGroup()
        for id in ["a", "b"] { try await group.add(id) }
        try await group.coordinators[0].coordinatePlay()
        await group.clock.advance(by: .seconds(2))
        let joiner = try await group.add("c")
        joiner.takePreparing(.milliseconds(400), .milliseconds(400))
        try await group.coordinators[2].join()
        await group.medium.setStartPrediction(delivery: .milliseconds(40), roundTrip: .milliseconds(40))
        // Predicted: 40 + 6/5 × 400 + 2 = 522 ms; a barrier: 2 × 40 + 25 + 400 / 2 = 305 ms.
        try await group.coordinators[0].coordinateSeek(to: .seconds(5))
        let seek = try unwrap(await group.medium.lastBarrierTiming)
        XCTAssertFalse(seek.predicted, "the join's 400 ms would have put the instant past the barrier's")
        for target in group.targets { XCTAssertEqual(target.startedAt.count, 2, "started by the seek") }
        // The barrier measured every preparation as a group command's (no time: the fakes were ready at once).
        let commandAt = group.time.time
        try await group.coordinators[0].coordinateSeek(to: .seconds(8))
        let next = try unwrap(await group.medium.lastBarrierTiming)
        XCTAssertTrue(next.predicted)
        for target in group.targets { XCTAssertEqual(target.startedAt.last, commandAt + .milliseconds(42)) }
    }
}
