import Coordination
import XCTest

/// The start margin: floor + crowd + an extra that doubles after a miss and halves after clean starts.
/// Pure: no pipeline, no daemon.
final class StartMarginPolicyTests: XCTestCase {
    func testTheFloorForUpToFourParticipantsAndATenthOfAMillisecondForEachBeyond() {
        let policy = StartMarginPolicy()
        XCTAssertEqual(policy.margin(participants: 1), .milliseconds(2))
        XCTAssertEqual(policy.margin(participants: 4), .milliseconds(2))
        XCTAssertEqual(policy.margin(participants: 9), .microseconds(2500))
    }

    func testAMissDoublesTheExtraFromTheFloorAndCleanStartsHalveItBackToZero() {
        var policy = StartMarginPolicy()
        policy.recordStart(missed: 0)
        XCTAssertEqual(policy.extra, .zero)
        policy.recordStart(missed: 1)
        XCTAssertEqual(policy.extra, .milliseconds(2), "the first miss adds the floor")
        policy.recordStart(missed: 3)
        XCTAssertEqual(policy.extra, .milliseconds(4), "a second miss doubles it")
        XCTAssertEqual(policy.margin(participants: 2), .milliseconds(6))
        policy.recordStart(missed: 0)
        XCTAssertEqual(policy.extra, .milliseconds(2))
        policy.recordStart(missed: 0)
        XCTAssertEqual(policy.extra, .milliseconds(1))
        policy.recordStart(missed: 0)
        XCTAssertEqual(policy.extra, .microseconds(500), "1 ms halves once more")
        policy.recordStart(missed: 0)
        XCTAssertEqual(policy.extra, .zero, "below 1 ms it drops to nothing")
    }

    func testTheExtraNeverExceedsItsMaximum() {
        var policy = StartMarginPolicy()
        for _ in 0..<20 { policy.recordStart(missed: 1) }
        XCTAssertEqual(policy.extra, .milliseconds(48))
        XCTAssertEqual(policy.margin(participants: 4), .milliseconds(50))
    }

    func testARaisedFloorIsAlsoWhereTheExtraStarts() {
        var policy = StartMarginPolicy(floor: .milliseconds(400))
        policy.recordStart(missed: 1)
        XCTAssertEqual(policy.extra, .milliseconds(48), "capped: the extra is for misses, not for the floor")
        XCTAssertEqual(policy.margin(participants: 1), .milliseconds(448))
    }
}
