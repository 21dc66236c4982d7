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
        let moved = prediction.with(delivery: .milliseconds(60), roundTrip: .milliseconds(70))
        XCTAssertEqual(moved.delivery, .milliseconds(60))
        XCTAssertEqual(moved.roundTrip, .milliseconds(70))
        XCTAssertEqual(moved.extra, .milliseconds(10))
    }

    func testABarrierIsEstimatedFromItsRoundTripsMarginAndPreparationWithAJoinsAtHalf() {
        let prediction = StartPrediction(delivery: .milliseconds(32), roundTrip: .milliseconds(40))
        XCTAssertEqual(prediction.barrierEstimate(slowestPrepare: .milliseconds(50)), .milliseconds(80 + 25 + 50))
        XCTAssertEqual(StartPrediction.barrierPreparation([(.milliseconds(231), true), (.milliseconds(105), false)]),
                       .milliseconds(115.5))
        XCTAssertEqual(StartPrediction.barrierPreparation([(.milliseconds(60), false), (.milliseconds(100), true)]),
                       .milliseconds(60))
        XCTAssertNil(StartPrediction.barrierPreparation([]))
    }

    /// The bench's figures (20 ± 5 ms relayed): 2 and 4 members predict from their joins; 8 members joined together
    /// (a join measured 231 ms) do not, until a group command has measured them (the slowest 105 ms).
    func testPredictingIsChosenOnlyWhenItsLeadIsNoLongerThanTheBarriersEstimate() {
        let four = StartPrediction(delivery: .milliseconds(32), roundTrip: .milliseconds(40))
        XCTAssertTrue(four.beatsBarrier(expectedPrepare: .milliseconds(43), barrierPrepare: .milliseconds(21.5)))
        let eight = StartPrediction(delivery: .milliseconds(39), roundTrip: .milliseconds(40))
        XCTAssertFalse(eight.beatsBarrier(expectedPrepare: .milliseconds(231), barrierPrepare: .milliseconds(115.5)))
        XCTAssertTrue(eight.beatsBarrier(expectedPrepare: .milliseconds(105), barrierPrepare: .milliseconds(105)))
        let unmeasured = StartPrediction(delivery: .milliseconds(25))
        XCTAssertFalse(unmeasured.beatsBarrier(expectedPrepare: .milliseconds(20), barrierPrepare: .milliseconds(20)),
                       "no round trip measured yet: the barrier")
    }
}
