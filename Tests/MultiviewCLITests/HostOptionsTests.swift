import ArgumentParser
import XCTest
@testable import MultiviewCLI

/// `host --drop-after SECONDS`: how long a silent member is kept before the group goes on without it. Out-of-range
/// and non-finite values are refused with one line naming the value and the range. Pure: argument parsing only.
final class HostOptionsTests: XCTestCase {
    func testDropAfterTakesSecondsInItsRange() throws {
        XCTAssertEqual(try Host.parse(["m.mp4"]).dropAfter, 3, "the default")
        XCTAssertEqual(try Host.parse(["--drop-after", "8", "m.mp4"]).dropAfter, 8)
        XCTAssertEqual(try Host.parse(["--drop-after", "0.5", "m.mp4"]).dropAfter, 0.5)
    }

    func testDropAfterOutOfRangeIsOneLineNamingTheValue() {
        for value in ["0.1", "0", "-3", "601", "nan", "inf"] {
            XCTAssertThrowsError(try Host.parse(["--drop-after=\(value)", "m.mp4"]), value) { error in
                let message = Host.message(for: error)
                XCTAssertTrue(message.contains("--drop-after"), message)
                XCTAssertTrue(message.contains("between 0.5 and 600 seconds"), message)
                XCTAssertFalse(message.contains("\n"), message)
            }
        }
    }
}
