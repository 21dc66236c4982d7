import GStreamer
import XCTest

/// Pure: `NetClockTuning`'s presets and bounds (no clock, no network).
final class NetClockTuningTests: XCTestCase {
    func testTheNamedTuningsAreTheBenchFlagsValues() {
        XCTAssertEqual(NetClockTuning.named["standard"], .standard)
        XCTAssertEqual(NetClockTuning.named["previous"], .previous)
        XCTAssertEqual(NetClockTuning.named["gstreamer"], .gstreamerDefaults)
        XCTAssertNil(NetClockTuning.named["fast"])
    }

    func testThePreviousTuningIsLastRoundsAndGStreamersAreItsDocumentedDefaults() {
        XCTAssertEqual(NetClockTuning.previous, NetClockTuning(roundTripLimit: .milliseconds(200),
                                                               minimumUpdateInterval: .milliseconds(20),
                                                               pollInterval: .milliseconds(20), calibrationWindow: 128))
        XCTAssertEqual(NetClockTuning.gstreamerDefaults, NetClockTuning(roundTripLimit: .seconds(1),
                                                                        minimumUpdateInterval: .milliseconds(50),
                                                                        pollInterval: .milliseconds(100), calibrationWindow: 32))
    }

    func testTheClockDefaultsAreTheStandardTuning() {
        XCTAssertEqual(NetClientClock.defaultRoundTripLimit, NetClockTuning.standard.roundTripLimit)
        XCTAssertEqual(NetClientClock.defaultMinimumUpdateInterval, NetClockTuning.standard.minimumUpdateInterval)
        XCTAssertEqual(NetClientClock.defaultPollInterval, NetClockTuning.standard.pollInterval)
        XCTAssertEqual(NetClientClock.defaultCalibrationWindow, NetClockTuning.standard.calibrationWindow)
    }

    func testTheStandardTuningPollsNoFasterThanItsMinimumUpdateInterval() {
        // On a link whose round trip is shorter than the minimum update interval (loopback, a LAN) GStreamer
        // waits that interval, not the poll period: a poll below it would be a setting that does nothing there.
        let standard = NetClockTuning.standard
        XCTAssertLessThanOrEqual(standard.minimumUpdateInterval, standard.pollInterval)
        XCTAssertGreaterThan(standard.roundTripLimit, .milliseconds(50), "a 20 ± 5 ms link's every exchange stays in")
        XCTAssertTrue(standard.adaptsRoundTripLimit, "the fixed limit is only the adaptive one's ceiling")
        XCTAssertFalse(NetClockTuning.previous.adaptsRoundTripLimit)
    }

    func testTheWindowStaysWithinGStreamersRange() {
        let huge = NetClockTuning(roundTripLimit: .seconds(1), minimumUpdateInterval: .milliseconds(5),
                                  pollInterval: .milliseconds(5), calibrationWindow: 5000)
        XCTAssertEqual(huge.calibrationWindow, 1024, "GstClock window-size allows 2…1024")
        let tiny = NetClockTuning(roundTripLimit: .seconds(1), minimumUpdateInterval: .milliseconds(5),
                                  pollInterval: .milliseconds(5), calibrationWindow: 0)
        XCTAssertEqual(tiny.calibrationWindow, 2)
    }
}
