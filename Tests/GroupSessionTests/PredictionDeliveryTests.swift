@testable import GroupSession
import XCTest

/// A predicted start's delivery, from the heartbeat: one way where the member's pong says when the ping arrived,
/// the round trip otherwise. Pure.
final class PredictionDeliveryTests: XCTestCase {
    func testAPongsOneWayDelayIsItsArrivalLessItsDepartureWhenThatIsPossible() {
        let ms: UInt64 = 1_000_000
        XCTAssertEqual(RemoteMember.oneWay(sent: 100 * ms, received: 123 * ms, roundTrip: 41 * ms), .milliseconds(23))
        XCTAssertNil(RemoteMember.oneWay(sent: 100 * ms, received: nil, roundTrip: 41 * ms), "the member did not say")
        XCTAssertNil(RemoteMember.oneWay(sent: 100 * ms, received: 99 * ms, roundTrip: 41 * ms),
                     "arrived before it left: the member's clock is not synchronised")
        XCTAssertNil(RemoteMember.oneWay(sent: 100 * ms, received: 142 * ms, roundTrip: 41 * ms),
                     "longer than the round trip: the member's clock is not synchronised")
    }

    func testTheDeliveryIsTheLongestOneWayDelayPlusFiveMillisecondsElseTheRoundTrip() {
        XCTAssertEqual(SessionHost.predictionDelivery(slowestOneWay: .microseconds(23_200), slowestRoundTrip: .milliseconds(41)),
                       .milliseconds(5 + 24))
        XCTAssertEqual(SessionHost.predictionDelivery(slowestOneWay: nil, slowestRoundTrip: .microseconds(41_300)),
                       .milliseconds(5 + 42))
        XCTAssertEqual(SessionHost.predictionDelivery(slowestOneWay: nil, slowestRoundTrip: .zero), SessionHost.networkMarginBase,
                       "no round trip measured yet")
    }
}
