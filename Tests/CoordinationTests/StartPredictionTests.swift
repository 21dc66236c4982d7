import Coordination
import XCTest

/// A predicted start's lead: delivery + 6/5 of the expected preparation + floor + an extra that grows after a miss.
/// Pure: no pipeline, no daemon.
final class StartPredictionTests: XCTestCase {
    func testTheLeadIsTheDeliveryPlusSixFifthsOfThePreparationPlusTheFloor() {
        let prediction = StartPrediction(delivery: .milliseconds(43))
        XCTAssertEqual(prediction.lead(expectedPrepare: .milliseconds(25)), .milliseconds(43 + 30 + 2))
        XCTAssertEqual(prediction.lead(expectedPrepare: .zero), .milliseconds(45))
    }

    func testAMissAddsTenMillisecondsThenDoublesUpToTheMaximumAndCleanStartsHalveItAway() {
        var prediction = StartPrediction(delivery: .milliseconds(40), maximumExtra: .milliseconds(30))
        prediction.recordStart(missed: 0)
        XCTAssertEqual(prediction.extra, .zero)
        prediction.recordStart(missed: 1)
        XCTAssertEqual(prediction.extra, .milliseconds(10))
        XCTAssertEqual(prediction.lead(expectedPrepare: .milliseconds(10)), .milliseconds(40 + 12 + 2 + 10))
        prediction.recordStart(missed: 2)
        XCTAssertEqual(prediction.extra, .milliseconds(20))
        prediction.recordStart(missed: 1)
        XCTAssertEqual(prediction.extra, .milliseconds(30), "capped at the maximum")
        prediction.recordStart(missed: 0)
        XCTAssertEqual(prediction.extra, .milliseconds(15))
        for _ in 0..<4 { prediction.recordStart(missed: 0) }
        XCTAssertEqual(prediction.extra, .microseconds(937.5))
        prediction.recordStart(missed: 0)
        XCTAssertEqual(prediction.extra, .zero, "below 1 ms it drops to nothing")
    }

    func testANewDeliveryKeepsWhatMissesAdded() {
        var prediction = StartPrediction(delivery: .milliseconds(40))
        prediction.recordStart(missed: 1)
        let moved = prediction.with(delivery: .milliseconds(60))
        XCTAssertEqual(moved.delivery, .milliseconds(60))
        XCTAssertEqual(moved.extra, .milliseconds(10))
    }
}
