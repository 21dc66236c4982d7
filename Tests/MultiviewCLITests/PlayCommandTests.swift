import ArgumentParser
import XCTest
@testable import MultiviewCLI

/// `play`'s numbers checked against their ranges before anything starts: the first problem as one line naming the
/// option as typed. Pure: parsing only (`run` is never called).
final class PlayCommandTests: XCTestCase {
    private func problem(_ arguments: [String], media: [String] = ["a.mp4", "b.mp4"]) throws -> String? {
        try Play.parse(arguments + media).inputProblem()
    }

    func testGoodOptionsHaveNoProblem() throws {
        XCTAssertNil(try problem([]))
        XCTAssertNil(try problem(["--duration", "2.5", "--tile", "640x360", "--spare-tiles", "16", "--priority", "2=high"]))
    }

    func testDuration() throws {
        XCTAssertEqual(try problem(["--duration", "five"]), "--duration five: expected seconds, e.g. 5 or 2.5")
        XCTAssertEqual(try problem(["--duration", "0"]), "--duration 0: out of range; allowed: more than 0 and at most 604800 s")
        XCTAssertEqual(try problem(["--duration=-3"]), "--duration -3: out of range; allowed: more than 0 and at most 604800 s")
        XCTAssertEqual(try problem(["--duration", "1e309"]),
                       "--duration 1e309: not a finite number; allowed: more than 0 and at most 604800 s",
                       "quoted as typed, not as inf")
    }

    func testTile() throws {
        XCTAssertEqual(try problem(["--tile", "480by270"]),
                       "--tile 480by270: expected WIDTHxHEIGHT with width 16…7680 and height 16…4320")
        XCTAssertEqual(try problem(["--tile", "8000x270"]),
                       "--tile 8000x270: out of range; allowed: WIDTHxHEIGHT with width 16…7680 and height 16…4320")
    }

    func testSpareTiles() throws {
        XCTAssertEqual(try problem(["--spare-tiles", "17"]), "--spare-tiles 17: out of range; allowed: 0…16")
    }

    func testAPriorityNamesAViewThatExists() throws {
        XCTAssertEqual(try problem(["--priority", "3=high"]), "--priority 3=high: no view 3; views are 1…2")
        XCTAssertNil(try problem(["--priority", "3=high"], media: ["a", "b", "c"]))
        XCTAssertEqual(try problem(["--priority", "4=low", "--priority", "3=high"]),
                       "--priority 3=high: no view 3; views are 1…2", "the lowest view number first")
    }

    func testTheFirstProblemIsTheOneNamed() throws {
        XCTAssertEqual(try problem(["--duration", "0", "--tile", "1x1"]),
                       "--duration 0: out of range; allowed: more than 0 and at most 604800 s")
    }

    func testNoMediaIsRefused() {
        XCTAssertThrowsError(try Play.parse([])) { error in
            // No media: the help, not the parser's "Missing expected argument" (issue 16).
            let message = Play.message(for: error)
            XCTAssertTrue(message.hasPrefix("OVERVIEW: "), message)
            XCTAssertFalse(message.contains("Missing expected argument"), message)
        }
    }
}
