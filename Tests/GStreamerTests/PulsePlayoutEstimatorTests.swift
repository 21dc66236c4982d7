@testable import GStreamer
import XCTest

/// `PulsePlayoutEstimator` and the parsing of pulsesink's timing lines (pure: no pipeline, no server).
final class PulsePlayoutEstimatorTests: XCTestCase {
    /// 48 kHz, 2 bytes a frame (s16 mono): 96 000 bytes a second.
    private let bytesPerSecond: Int64 = 96_000

    /// A snapshot of a stream that began playing at server instant `start` (ns) and runs at the server's rate,
    /// answered `delay` ns after the server took it.
    private func snapshot(at serverTime: Int64, start: Int64, sinkLatencyMicroseconds: Int64 = 40_000,
                          delay: Int64 = 0) -> PulsePlayoutEstimator.Snapshot {
        // Played stream time at serverTime = serverTime − start; the read index is that plus the sink's latency.
        let played = serverTime - start
        let readIndex = (played + sinkLatencyMicroseconds * 1_000) * bytesPerSecond / 1_000_000_000
        return .init(serverTime: serverTime + delay, readIndex: readIndex,
                     sinkLatencyMicroseconds: sinkLatencyMicroseconds)
    }

    func testAgreeingSnapshotsGiveTheStreamTimePlayingAtAnyLaterInstant() throws {
        var estimator = PulsePlayoutEstimator()
        let start: Int64 = 1_000_000_000_000
        estimator.add(snapshot(at: start + 100_000_000, start: start, sinkLatencyMicroseconds: 90_000))
        estimator.add(snapshot(at: start + 200_000_000, start: start, sinkLatencyMicroseconds: 4_000))
        let played = try XCTUnwrap(estimator.streamTime(at: start + 1_500_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertEqual(Double(played), 1_500_000_000, accuracy: 50_000,
                       "1.5 s after the start the stream plays 1.5 s in")
    }

    func testOneSnapshotIsNotEnough() {
        var estimator = PulsePlayoutEstimator()
        XCTAssertNil(estimator.streamTime(at: 0, bytesPerSecond: bytesPerSecond))
        estimator.add(snapshot(at: 5_000_000_000, start: 4_000_000_000))
        XCTAssertNil(estimator.streamTime(at: 5_100_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertNil(estimator.streamTime(at: 5_100_000_000, bytesPerSecond: 0), "no rate, no estimate")
    }

    func testAnswersDelayedByLoadMoveTheEstimateByLessThanTheirDelay() throws {
        var estimator = PulsePlayoutEstimator()
        let start: Int64 = 2_000_000_000
        // Five answers, two of them stamped 0.8 and 1.5 ms late by a busy server: the median keeps the true offset.
        for (k, delay) in [Int64(0), 800_000, 0, 1_500_000, 0].enumerated() {
            estimator.add(snapshot(at: start + Int64(k + 1) * 100_000_000, start: start, delay: delay))
        }
        let played = try XCTUnwrap(estimator.streamTime(at: start + 3_000_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertEqual(Double(played), 3_000_000_000, accuracy: 50_000)
    }

    func testANewTimelineStartsOverAtTheFirstSnapshotThatDisagrees() throws {
        var estimator = PulsePlayoutEstimator()
        let first: Int64 = 10_000_000_000
        estimator.add(snapshot(at: first + 100_000_000, start: first))
        estimator.add(snapshot(at: first + 200_000_000, start: first))
        // Corked for 300 ms: from then on the stream plays 300 ms later than on its first timeline.
        let second = first + 300_000_000
        estimator.add(snapshot(at: first + 700_000_000, start: second))
        XCTAssertNil(estimator.streamTime(at: first + 800_000_000, bytesPerSecond: bytesPerSecond),
                     "one snapshot of the new timeline: no estimate, and none from the old one")
        estimator.add(snapshot(at: first + 900_000_000, start: second))
        let played = try XCTUnwrap(estimator.streamTime(at: first + 1_300_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertEqual(Double(played), 1_000_000_000, accuracy: 50_000, "on the new timeline")
    }

    func testSnapshotsAnsweredBeforeARestartAreIgnored() throws {
        var estimator = PulsePlayoutEstimator()
        let start: Int64 = 20_000_000_000
        estimator.add(snapshot(at: start + 100_000_000, start: start))
        estimator.add(snapshot(at: start + 200_000_000, start: start))
        estimator.restart(at: start + 250_000_000)
        XCTAssertNil(estimator.streamTime(at: start + 300_000_000, bytesPerSecond: bytesPerSecond))
        // A late answer to a request from before the flush, then two from after it (a new timeline).
        estimator.add(snapshot(at: start + 240_000_000, start: start))
        estimator.add(snapshot(at: start + 400_000_000, start: start + 350_000_000))
        estimator.add(snapshot(at: start + 450_000_000, start: start + 350_000_000))
        let played = try XCTUnwrap(estimator.streamTime(at: start + 550_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertEqual(Double(played), 200_000_000, accuracy: 50_000)
    }

    func testOnlyTheLatestSnapshotsCount() throws {
        var estimator = PulsePlayoutEstimator()
        let start: Int64 = 30_000_000_000
        // A device 1 ms per second slower than the server's clock: the oldest snapshots no longer say where it is.
        for k in 1...20 {
            let at = start + Int64(k) * 1_000_000_000
            var s = snapshot(at: at, start: start)
            s.readIndex -= Int64(k) * bytesPerSecond / 1_000   // 1 ms a second behind
            estimator.add(s)
        }
        let played = try XCTUnwrap(estimator.streamTime(at: start + 20_000_000_000, bytesPerSecond: bytesPerSecond))
        XCTAssertEqual(Double(played), 19_981_000_000, accuracy: 200_000,
                       "the median of the three latest, which agree within 2 ms (19 ms behind), not of all 20 (10 ms)")
    }

    func testPulsesinksTimingLineIsParsed() throws {
        let line = "latency_update, 1796675806469875000, 0:10374, 0:8654, 1907678, 90000"
        let parsed = try XCTUnwrap(PulseTimingLog.parse(line))
        XCTAssertEqual(parsed, .init(serverTime: 1_796_675_806_469_875_000, readIndex: 8654,
                                     sinkLatencyMicroseconds: 1_907_678))
        XCTAssertNil(PulseTimingLog.parse("latency_update, 1796675806469875000, 0:10374, 1:8654, 1907678, 90000"),
                     "a read index libpulse marks corrupt is not a snapshot")
        XCTAssertNil(PulseTimingLog.parse("current time is 0:00:01.000000000"))
        XCTAssertNil(PulseTimingLog.parse("latency_update, x, 0:1, 0:2, 3, 4"))
    }
}
