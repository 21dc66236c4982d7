import XCTest
@testable import SyncAnalysis

/// The text format of `play --sync-log` (`render-times.log`): written lines read back as the same records, a
/// clock mapping from wall-clock times, and malformed input named by line. Pure.
final class SyncLogTests: XCTestCase {
    func testWrittenLinesReadBackAsTheSameRecords() throws {
        let frames = renders(view: 1, indices: [0, 1, 2], item: "event")
            + renders(view: 2, indices: [0, 1], webm: true, rate: 2, offsetNs: 150_000, item: "event")
            + renders(view: 1, indices: [3], item: "an item with spaces")
        var items: [Int: String] = [:]
        let text = SyncLog.header + "\n" + SyncLog.lines(for: frames, lastItems: &items)
            + SyncLog.line(for: .init(clockNs: 5, unixNs: 7))
        XCTAssertEqual(text.components(separatedBy: "\nV ").count - 1, 3, "a V line per view, and one on the item change")
        let log = try SyncLog.parse(text[...])
        XCTAssertEqual(log.frames, frames.map { var f = $0; f.phase = 0; return f })
        XCTAssertEqual(log.clockPairs, [.init(clockNs: 5, unixNs: 7)])
    }

    func testAnItemIsWrittenOnlyWhenItChanges() {
        var items: [Int: String] = [1: "event"]
        let text = SyncLog.lines(for: renders(view: 1, indices: [0, 1], item: "event"), lastItems: &items)
        XCTAssertFalse(text.contains("V "), text)
    }

    func testALastLineCutShortIsIgnored() throws {
        let text = SyncLog.header + "\nT 10 20\nF 1 1000 0 1.0\nF 2 10"
        let log = try SyncLog.parse(text[...])
        XCTAssertEqual(log.frames.count, 1)
        XCTAssertEqual(log.frames.first?.item, "", "a frame before any V line has no item")
    }

    func testMalformedInputIsNamed() {
        XCTAssertThrowsError(try SyncLog.parse("frames\n"[...])) { error in
            XCTAssertEqual(error as? SyncLog.ParseError, .missingHeader(found: "frames"))
        }
        XCTAssertThrowsError(try SyncLog.parse((SyncLog.header + "\nT 1 2\nF 1 x 0 1\n")[...])) { error in
            XCTAssertEqual(error as? SyncLog.ParseError, .malformedLine(number: 3, text: "F 1 x 0 1"))
            XCTAssertEqual("\(error)", "line 3: malformed record 'F 1 x 0 1'")
        }
        XCTAssertThrowsError(try SyncLog.parse((SyncLog.header + "\nQ 1\n")[...]))
    }

    func testWallClockTimesMapThroughTheNearestPair() {
        // The wall clock was slewed 1 ms between the two pairs: each time maps through the pair nearest to it.
        let log = SyncLog(clockPairs: [.init(clockNs: 1_000, unixNs: 1_000_000_000_000),
                                       .init(clockNs: 600_000_001_000, unixNs: 1_600_001_000_000)])
        XCTAssertEqual(log.clockNs(atUnixNs: 1_000_000_000_500), 1_500)
        XCTAssertEqual(log.clockNs(atUnixNs: 1_600_001_000_000), 600_000_001_000)
        XCTAssertEqual(log.clockNs(atUnixNs: 1_500_001_000_000), 500_000_001_000, "nearer the second pair")
        XCTAssertNil(log.clockNs(atUnixNs: 1), "before the clock's zero")
        XCTAssertNil(SyncLog().clockNs(atUnixNs: 5))
    }
}
