import ArgumentParser
import XCTest
@testable import MultiviewCLI

/// `play`'s routing flags: which ask for an arbiter, the one line a bad value gets, and `--external-size`. Pure:
/// parsing only (no PulseAudio, no display).
final class RoutingOptionsTests: XCTestCase {
    func testNoFlagsAskForNoArbiter() throws {
        XCTAssertFalse(try RoutingOptions.parse([]).isRequested)
        XCTAssertFalse(try RoutingOptions.parse(["--external-size", "640x480"]).isRequested, "a size alone asks for nothing")
        for flags in [["--audio-route", "living"], ["--non-mixable", "tv"], ["--prefer-audio", "2"],
                      ["--prefer-external", "1"], ["--local-only", "3"], ["--external-display", ":91"]] {
            XCTAssertTrue(try RoutingOptions.parse(flags).isRequested, "\(flags)")
        }
    }

    func testViewNumbersAreOneBased() {
        for flags in [["--prefer-audio", "0"], ["--prefer-external=-1"], ["--local-only", "2", "--local-only", "0"]] {
            XCTAssertThrowsError(try RoutingOptions.parse(flags), "\(flags)") { error in
                XCTAssertEqual(RoutingOptions.message(for: error), "view numbers are 1-based")
            }
        }
        XCTAssertNoThrow(try RoutingOptions.parse(["--prefer-audio", "1", "--local-only", "4"]))
    }

    func testExternalSize() throws {
        XCTAssertTrue(try RoutingOptions.parse([]).parsedSize! == (1280, 720), "the default")
        XCTAssertTrue(try RoutingOptions.parse(["--external-size", "640x480"]).parsedSize! == (640, 480))
        XCTAssertTrue(try RoutingOptions.parse(["--external-size", "1920X1080"]).parsedSize! == (1920, 1080))
        XCTAssertTrue(try RoutingOptions.parse(["--external-size", "16x16"]).parsedSize! == (16, 16))
        for bad in ["640", "640x", "x480", "15x480", "640x15", "640by480", "1280x720xfoo", "x1280x720", "1280xx720", "axb"] {
            XCTAssertThrowsError(try RoutingOptions.parse(["--external-size", bad]), bad) { error in
                XCTAssertEqual(RoutingOptions.message(for: error), "--external-size must look like 1280x720")
            }
        }
    }
}
