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

    func testOtherStructuresAndIncompleteOnesAreNotStatistics() {
        XCTAssertNil(NetClockStatistics(Structure(name: "level", fields: ["rtt": .uint(1)])))
        XCTAssertNil(NetClockStatistics(Structure(name: "gst-netclock-statistics", fields: ["rtt": .uint(1)])))
    }
}
