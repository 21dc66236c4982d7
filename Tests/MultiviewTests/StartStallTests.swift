import XCTest
@testable import Multiview

/// The stall verdict on stopped streaming tasks (pure: the readings and the instants are made up here).
final class StartStallTests: XCTestCase {
    private let t0 = ContinuousClock.now

    func testATaskStoppedAtEveryReadingForTheLimitIsAStall() {
        var stall = StartStall()
        XCTAssertFalse(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0))
        XCTAssertFalse(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .milliseconds(900)))
        XCTAssertTrue(stall.noteStoppedTasks(["qtdemux0:sink", "queue2:src"], at: t0 + StartStall.stoppedTaskLimit))
    }

    func testAReadingWithNoStoppedTaskStartsTheWaitAgain() {
        var stall = StartStall()
        XCTAssertFalse(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0))
        XCTAssertFalse(stall.noteStoppedTasks([], at: t0 + .milliseconds(500)))
        XCTAssertFalse(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .milliseconds(600)))
        XCTAssertFalse(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .milliseconds(1500)))
        XCTAssertTrue(stall.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .milliseconds(1600)))
    }

    func testNoVerdictOnceTheStartSettledOrWasRestarted() {
        var settled = StartStall()
        settled.settled()
        XCTAssertFalse(settled.noteStoppedTasks(["qtdemux0:sink"], at: t0))
        XCTAssertFalse(settled.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .seconds(3)))
        var restarted = StartStall()
        XCTAssertFalse(restarted.noteStoppedTasks(["qtdemux0:sink"], at: t0))
        restarted.restarted()
        XCTAssertFalse(restarted.noteStoppedTasks(["qtdemux0:sink"], at: t0 + .seconds(3)))
        XCTAssertFalse(restarted.mayRestart)
    }

    func testTheSoonerSignIsWellInsideTheSlowLimit() {
        XCTAssertLessThan(StartStall.stoppedTaskLimit * 3, StartStall.limit)
    }
}
