import Coordination
import Foundation
import GStreamer
import Synchronization
import XCTest

/// The start margin adapts to missed instants: a participant that gets "play at C" too late widens the next
/// margins (doubling), and starts nobody missed bring it back to the floor (halving). Pure logic: the
/// participants are fakes that answer at once (the real start is covered by SinksFirstStartTests).
final class StartMarginTests: XCTestCase {
    /// Answers every command at once; refuses the plays it is told to miss, as a late Player does.
    final class FakeTarget: CoordinatedPlaybackTarget {
        let missesLeft = Mutex(0)
        let plays = Mutex(0)
        func adopt(clock: Clock) async throws {}
        func releaseClock() async {}
        func perform(_ command: DelegatedCommand) async throws {
            guard case .play = command.kind else { return }
            plays.withLock { $0 += 1 }
            let miss = missesLeft.withLock { left in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            if miss { throw CoordinationError.missedStartInstant }
        }
        func currentItemTime() async -> ClockTime? { .zero }
        func isPlaying() async -> Bool { false }
        func setWaiting(_ waiting: Bool) async {}
        func setDetached(_ detached: Bool) async {}
    }

    func testAMissedInstantWidensTheNextMarginsAndTheyShrinkBack() async throws {
        let medium = PlaybackCoordinationMedium()
        let targets = [FakeTarget(), FakeTarget()]
        var coordinators: [PlaybackCoordinator] = []
        for (index, target) in targets.enumerated() {
            let coordinator = PlaybackCoordinator(id: ParticipantID("fake\(index)"), defaultIdentifier: "event",
                                                  target: target)
            try await coordinator.coordinate(using: medium)
            coordinators.append(coordinator)
        }
        let floor = await medium.startMargin
        var margins: [Duration] = []
        func timing() async throws -> PlaybackCoordinationMedium.BarrierTiming {
            let last = await medium.lastBarrierTiming
            return try XCTUnwrap(last, "no barrier ran")
        }
        func seek(_ seconds: Int) async throws {
            try await coordinators[0].coordinateSeek(to: .seconds(Double(seconds)))
            margins.append(try await timing().startMargin)
        }
        try await coordinators[0].coordinatePlay()
        margins.append(try await timing().startMargin)
        let missed = try await timing().missedStart
        XCTAssertEqual(missed, 0)

        targets[1].missesLeft.withLock { $0 = 1 }
        try await seek(5)
        let afterMiss = try await timing()
        XCTAssertEqual(afterMiss.missedStart, 1, "the refused start was not counted")
        XCTAssertGreaterThanOrEqual(targets[1].plays.withLock { $0 }, 3, "the late participant was not caught up")
        for second in [10, 15, 20, 25, 30] { try await seek(second) }

        // play and the seek with the miss: the floor; then doubled; then halved until back at the floor.
        XCTAssertEqual(margins[0], floor)
        XCTAssertEqual(margins[1], floor, "the barrier in which the miss happened was already under way")
        XCTAssertEqual(margins[2], floor * 2, "after a miss the next margin doubles its extra: \(margins)")
        XCTAssertEqual(margins[3], floor + floor / 2, "\(margins)")
        XCTAssertLessThan(margins[4], margins[3], "\(margins)")
        XCTAssertEqual(margins.last, floor, "the margin never came back to the floor: \(margins)")
        for coordinator in coordinators { await coordinator.disconnect() }
    }
}
