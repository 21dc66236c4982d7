import ArgumentParser
import XCTest
@testable import MultiviewCLI

/// `play --sync-log DIR` and `sync-log-skew --windows FILE`: their inputs checked before anything plays. Pure.
final class SyncLogOptionTests: XCTestCase {
    func testSyncLogNeedsHeadless() throws {
        XCTAssertNil(try Play.parse(["--headless", "--sync-log", "out/sync", "a.mp4"]).inputProblem())
        XCTAssertEqual(try Play.parse(["--sync-log", "out/sync", "a.mp4"]).inputProblem(),
                       "--sync-log out/sync: needs --headless (it records the fake video sinks' render times)")
        XCTAssertEqual(try Play.parse(["--headless", "--sync-log", "", "a.mp4"]).inputProblem(), "--sync-log: expected a directory")
        XCTAssertNil(try Play.parse(["a.mp4"]).inputProblem(), "without the option nothing changes")
    }

    func testWindowLines() throws {
        let windows = try SyncLogSkew.parseWindows("# quiet\n100.5 120 \n130 140 2,3 # r 2\n\n", file: "w.txt")
        XCTAssertEqual(windows.count, 2)
        XCTAssertEqual(windows[0].start, 100.5)
        XCTAssertEqual(windows[0].end, 120)
        XCTAssertEqual(windows[0].excluded, [])
        XCTAssertEqual(windows[1].excluded, [2, 3])
    }

    func testAMalformedWindowLineIsNamed() {
        XCTAssertThrowsError(try SyncLogSkew.parseWindows("100 120\n130 x\n", file: "w.txt")) { error in
            XCTAssertEqual("\(error)", "w.txt:2: expected 'START END [VIEW,VIEW…]', found '130 x'")
        }
        XCTAssertThrowsError(try SyncLogSkew.parseWindows("1 2 a,b\n", file: "w.txt"))
        XCTAssertThrowsError(try SyncLogSkew.parseWindows("1 2 3 4\n", file: "w.txt"))
    }
}
