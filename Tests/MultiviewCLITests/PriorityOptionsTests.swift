import ArgumentParser
import Priority
import XCTest
@testable import MultiviewCLI

/// `play`'s `--priority N=level` and `--bandwidth RATE` options: what they read and the one line a bad value gets.
/// Pure: argument parsing only (no stage, no observer made).
final class PriorityOptionsTests: XCTestCase {
    func testRatesWithTheirUnits() {
        XCTAssertEqual(PriorityOptions.parseRate("6M"), 6_000_000)
        XCTAssertEqual(PriorityOptions.parseRate("6m"), 6_000_000)
        XCTAssertEqual(PriorityOptions.parseRate("800k"), 800_000)
        XCTAssertEqual(PriorityOptions.parseRate("800K"), 800_000)
        XCTAssertEqual(PriorityOptions.parseRate("1.5G"), 1_500_000_000)
        XCTAssertEqual(PriorityOptions.parseRate("2.5M"), 2_500_000)
        XCTAssertEqual(PriorityOptions.parseRate("6000000"), 6_000_000)
    }

    func testBadRatesAreNil() {
        for text in ["", "M", "six", "6MB", "6 M", "0", "0k", "-1M", "inf", "nan", "0.4", "1e30G", "1e300"] {
            XCTAssertNil(PriorityOptions.parseRate(text), "'\(text)'")
        }
    }

    func testPrioritiesByViewNumber() throws {
        let options = try PriorityOptions.parse(["--priority", "2=high", "--priority", "1=LOW", "--priority", "3=default"])
        XCTAssertEqual(try options.parsedPriorities(), [1: .low, 2: .high, 3: .default])
        let later = try PriorityOptions.parse(["--priority", "2=high", "--priority", "2=low"])
        XCTAssertEqual(try later.parsedPriorities(), [2: .low], "the last one given for a view wins")
        XCTAssertEqual(try PriorityOptions.parse([]).parsedPriorities(), [:])
    }

    func testBadPrioritiesAreOneLineNamingTheValue() {
        for item in ["2", "2=", "=high", "0=high", "-1=high", "x=high", "2=urgent", "2:high"] {
            XCTAssertThrowsError(try PriorityOptions.parse(["--priority=\(item)"]), item) { error in
                let message = PriorityOptions.message(for: error)
                XCTAssertTrue(message.contains("--priority must look like 2=high"), message)
                XCTAssertTrue(message.contains("'\(item)'"), message)
                XCTAssertFalse(message.contains("\n"), message)
            }
        }
    }

    func testBadBandwidthIsRefusedWhenParsed() throws {
        XCTAssertEqual(try PriorityOptions.parse(["--bandwidth", "6M"]).bandwidth, "6M")
        for text in ["6MB", "0", "fast", "1e30G"] {
            XCTAssertThrowsError(try PriorityOptions.parse(["--bandwidth", text]), text) { error in
                XCTAssertEqual(PriorityOptions.message(for: error),
                               "--bandwidth must look like 6M, 800k or 6000000 (bits per second)")
            }
        }
    }

    func testNoObserverWithoutHLSOrAnOption() throws {
        XCTAssertNil(try PriorityOptions.parse([]).makeObserver(media: ["/media/a.mp4", "/media/b.mp4"]))
    }
}
