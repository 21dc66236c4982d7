@testable import Multiview
import Synchronization
import XCTest

/// The rule that keeps a coordinated view silent until its follower has placed its audio (pure logic: the
/// follower's placement in, the gain changes out). The real sink side is HeldAudioPlaybackTests (CoordinationTests).
final class AudioPlacementHoldTests: XCTestCase {
    /// The gain changes a hold asked for, in order (true: silenced, false: heard again).
    private final class GainChanges: Sendable {
        private let changes = Mutex<[Bool]>([])
        func append(_ silent: Bool) { changes.withLock { $0.append(silent) } }
        func withLock<R>(_ body: ([Bool]) -> R) -> R { changes.withLock { body($0) } }
    }

    private func recordedHold() -> (AudioPlacementHold, GainChanges) {
        let changes = GainChanges()
        let hold = AudioPlacementHold { silent in changes.append(silent) }
        return (hold, changes)
    }

    func testACoordinatedViewIsSilentUntilPlacedAndHeardFromThen() {
        let (hold, changes) = recordedHold()
        hold.engage(true)
        XCTAssertEqual(changes.withLock { $0 }, [true], "a fresh stream is not placed: silent from the start")
        for _ in 0..<17 { hold.report(placed: false) }
        XCTAssertTrue(hold.statistics.held)
        hold.report(placed: true)
        XCTAssertEqual(changes.withLock { $0 }, [true, false], "heard once placed")
        for _ in 0..<100 { hold.report(placed: true) }
        XCTAssertEqual(changes.withLock { $0 }, [true, false], "the gain is set on changes only, not per report")
        XCTAssertEqual(hold.statistics, AudioPlacementHold.Statistics(holds: 1, givenUp: 0, held: false))
    }

    func testEveryRestartOfTheFollowerHoldsAgain() {
        let (hold, changes) = recordedHold()
        hold.engage(true)
        hold.report(placed: true)
        // A seek (flush), a stall or a misplacement restarts the follower: not placed until its next decision.
        hold.report(placed: false)
        hold.report(placed: true)
        hold.report(placed: false)
        XCTAssertEqual(changes.withLock { $0 }, [true, false, true, false, true])
        XCTAssertEqual(hold.statistics.holds, 3)
        XCTAssertTrue(hold.statistics.held)
    }

    func testAViewNotCoordinatedIsNeverHeldAndLeavingTheGroupEndsAHold() {
        let (hold, changes) = recordedHold()
        for _ in 0..<20 { hold.report(placed: false) }
        XCTAssertEqual(changes.withLock { $0 }, [], "not engaged: a view playing alone is heard at once")
        hold.engage(true)
        XCTAssertEqual(changes.withLock { $0 }, [true])
        hold.engage(false)
        XCTAssertEqual(changes.withLock { $0 }, [true, false], "released the moment the view leaves the group")
        hold.report(placed: false)
        XCTAssertEqual(changes.withLock { $0 }, [true, false])
    }

    func testAStreamThatIsNeverPlacedIsHeardAfterTheLimit() {
        let (hold, changes) = recordedHold()
        hold.engage(true)
        for _ in 0..<AudioPlacementHold.maxHeldReports { hold.report(placed: false) }
        XCTAssertEqual(changes.withLock { $0 }, [true], "still held at the limit")
        hold.report(placed: false)
        XCTAssertEqual(changes.withLock { $0 }, [true, false], "given up past the limit: never silent for good")
        for _ in 0..<50 { hold.report(placed: false) }
        XCTAssertEqual(changes.withLock { $0 }, [true, false], "not held again before the follower places it once")
        XCTAssertEqual(hold.statistics, AudioPlacementHold.Statistics(holds: 1, givenUp: 1, held: false))
        // Placed at last, then restarted: held again, with a fresh limit.
        hold.report(placed: true)
        hold.report(placed: false)
        XCTAssertEqual(changes.withLock { $0 }, [true, false, true])
        XCTAssertEqual(hold.statistics.holds, 2)
    }

    /// The reason for the gain: the volume element flags a muted (or zero-gain) buffer as a gap, and an audio
    /// sink renders a gap without a slaving report, so the follower would never place the stream.
    func testTheHeldGainIsAboveZero() {
        XCTAssertGreaterThan(AudioPlacementHold.heldGain, 0)
        XCTAssertLessThan(20 * log10(AudioPlacementHold.heldGain), -120, "not silent enough")
    }
}
