import XCTest
@testable import Priority

/// `DownloadMeter`: chunk arrivals from many streaming threads, drained in arrival order, each once. Pure: no
/// demuxer, no network (threads are plain `DispatchQueue.concurrentPerform` workers).
final class DownloadMeterTests: XCTestCase {
    func testKeysKeepViewsAndStreamsApart() {
        XCTAssertEqual(DownloadMeter.key(view: 1, stream: 0), 100_000)
        XCTAssertEqual(DownloadMeter.key(view: 2, stream: 3), 200_003)
        XCTAssertNotEqual(DownloadMeter.key(view: 1, stream: 1), DownloadMeter.key(view: 2, stream: 1))
        XCTAssertEqual(DownloadMeter.key(view: 3, stream: 100_007), DownloadMeter.key(view: 3, stream: 7),
                       "a view's stream numbers wrap inside its own key range")
        let keys = Set((1...4).flatMap { v in (0..<50).map { DownloadMeter.key(view: v, stream: $0) } })
        XCTAssertEqual(keys.count, 200)
    }

    func testDrainReturnsArrivalsInOrderOnce() {
        let meter = DownloadMeter()
        XCTAssertEqual(meter.drain(), [])
        meter.record(stream: 7, bytes: 1000)
        meter.record(stream: 8, bytes: 2000)
        let first = meter.drain()
        XCTAssertEqual(first.map(\.stream), [7, 8])
        XCTAssertEqual(first.map(\.bytes), [1000, 2000])
        XCTAssertLessThanOrEqual(first[0].time, first[1].time)
        XCTAssertLessThanOrEqual(first[1].time, meter.now)
        XCTAssertEqual(meter.drain(), [], "drained arrivals are gone")
        meter.record(stream: 9, bytes: 5)
        XCTAssertEqual(meter.drain().map(\.stream), [9])
    }

    func testArrivalsFromManyThreadsAreAllKeptInTimeOrder() {
        let meter = DownloadMeter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<250 { meter.record(stream: thread, bytes: i) }
        }
        let arrivals = meter.drain()
        XCTAssertEqual(arrivals.count, 2000)
        XCTAssertEqual(arrivals.reduce(0) { $0 + $1.bytes }, 8 * (0..<250).reduce(0, +))
        XCTAssertTrue(zip(arrivals, arrivals.dropFirst()).allSatisfy { $0.time <= $1.time }, "stamped under the lock")
        for thread in 0..<8 {
            XCTAssertEqual(arrivals.filter { $0.stream == thread }.map(\.bytes), Array(0..<250),
                           "each thread's arrivals keep their order")
        }
    }
}
