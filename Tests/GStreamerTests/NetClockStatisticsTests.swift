import GStreamer
import XCTest

/// Pure: `NetClockStatistics` read from a `gst-netclock-statistics` structure (no clock, no network).
final class NetClockStatisticsTests: XCTestCase {
    func testAStatisticsStructureIsRead() throws {
        let structure = Structure(name: "gst-netclock-statistics", fields: [
            "synchronised": .bool(true), "rtt": .uint(41_000_000), "rtt-average": .uint(40_000_000),
            "discontinuity": .int(-12_000), "r-squared": .double(0.99), "timeout": .uint(20_000_000),
            "local-clock-offset": .int(-1_500_000),
        ])
        let statistics = try XCTUnwrap(NetClockStatistics(structure))
        XCTAssertTrue(statistics.synchronised)
        XCTAssertEqual(statistics.roundTrip, .milliseconds(41))
        XCTAssertEqual(statistics.roundTripAverage, .milliseconds(40))
        XCTAssertEqual(statistics.discontinuity, .microseconds(-12))
        XCTAssertEqual(statistics.rSquared, 0.99)
        XCTAssertEqual(statistics.nextPoll, .milliseconds(20))
        XCTAssertEqual(statistics.localClockOffset, .microseconds(-1500))
        XCTAssertNil(statistics.exchangeOffset, "no local/remote fields")
    }

    func testTheExchangesOwnOffsetIsRemoteMinusLocal() throws {
        let fields: [String: Structure.Value] = [
            "synchronised": .bool(true), "rtt": .uint(41_000_000), "rtt-average": .uint(40_000_000),
            "local": .uint(5_000_300_000), "remote": .uint(5_000_000_000),
        ]
        let behind = try XCTUnwrap(NetClockStatistics(Structure(name: "gst-netclock-statistics", fields: fields)))
        XCTAssertEqual(behind.exchangeOffset, .microseconds(-300))
        var ahead = fields
        ahead["remote"] = .uint(5_002_000_000)
        XCTAssertEqual(NetClockStatistics(Structure(name: "gst-netclock-statistics", fields: ahead))?.exchangeOffset,
                       .milliseconds(1) + .microseconds(700))
    }

    /// Loopback: GStreamer's bound is a quarter of the average round trip (25 µs here); `agrees(within:)` widens it
    /// to the floor given. Behind a relay (40 ms round trips) the quarter is already wider than the floor.
    func testAnExchangeAgreesWithinTheWiderOfAQuarterRoundTripAndTheFloor() throws {
        func exchange(minError: Int64, maxError: Int64, averageMicroseconds: Int64 = 100,
                      synchronised: Bool = false) throws -> NetClockStatistics {
            try XCTUnwrap(NetClockStatistics(Structure(name: "gst-netclock-statistics", fields: [
                "synchronised": .bool(synchronised), "rtt": .uint(UInt64(averageMicroseconds) * 1000),
                "rtt-average": .uint(UInt64(averageMicroseconds) * 1000),
                "remote-min-error": .int(Int(minError) * 1000), "remote-max-error": .int(Int(maxError) * 1000),
            ])))
        }
        let early = try exchange(minError: 120, maxError: 220)   // the clock reads 120-220 µs ahead of the provider
        XCTAssertEqual(early.remoteMinError, .microseconds(120))
        XCTAssertEqual(early.remoteMaxError, .microseconds(220))
        XCTAssertFalse(early.agrees(within: .zero), "GStreamer's 25 µs alone")
        XCTAssertTrue(early.agrees(within: .microseconds(250)))
        XCTAssertFalse(try exchange(minError: 300, maxError: 400).agrees(within: .microseconds(250)), "300 µs ahead")
        XCTAssertFalse(try exchange(minError: -500, maxError: -300).agrees(within: .microseconds(250)), "300 µs behind")
        XCTAssertTrue(try exchange(minError: -500, maxError: -300, synchronised: true).agrees(within: .zero),
                      "GStreamer's word is enough")
        XCTAssertTrue(try exchange(minError: 5_000, maxError: 6_000, averageMicroseconds: 40_000).agrees(within: .microseconds(250)),
                      "a quarter of 40 ms is 10 ms")
        let bare = NetClockStatistics(synchronised: false, roundTrip: .microseconds(100), roundTripAverage: .microseconds(100),
                                      discontinuity: .zero, rSquared: 1, nextPoll: .milliseconds(5))
        XCTAssertFalse(bare.agrees(within: .milliseconds(1)), "no errors posted: only GStreamer's word counts")
    }

    func testOtherStructuresAndIncompleteOnesAreNotStatistics() {
        XCTAssertNil(NetClockStatistics(Structure(name: "level", fields: ["rtt": .uint(1)])))
        XCTAssertNil(NetClockStatistics(Structure(name: "gst-netclock-statistics", fields: ["rtt": .uint(1)])))
    }
}
