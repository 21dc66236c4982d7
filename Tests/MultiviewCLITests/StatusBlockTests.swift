import GStreamer
import Multiview
import XCTest
@testable import MultiviewCLI

/// The terminal status block: redrawn in place with cursor-up and clear-to-end, lifted for a note and drawn again
/// below it; one compact line when the views do not fit the terminal's height. Pure (the bytes it returns).
final class StatusBlockTests: XCTestCase {
    private func report(_ count: Int, elapsed: Double = 1) -> StageStatus {
        StageStatus(elapsed: elapsed, views: (1...count).map {
            StageStatus.View(number: $0, name: "v\($0).mp4", state: .playing, position: .seconds(1), duration: .seconds(24))
        })
    }

    func testTheFirstDrawIsTheLinesAndLaterOnesGoBackUpFirst() {
        var block = StatusBlock()
        XCTAssertFalse(block.isDrawn)
        let first = block.redraw(report(2), size: (80, 24))
        XCTAssertEqual(first, "[   1.0s] 2 views\n1 v1.mp4 PLAYING   0:01/0:24\n2 v2.mp4 PLAYING   0:01/0:24\n")
        let second = block.redraw(report(2, elapsed: 2), size: (80, 24))
        XCTAssertTrue(second.hasPrefix("\u{1B}[3A\r\u{1B}[J[   2.0s] 2 views\n"), second.debugDescription)
        XCTAssertEqual(block.drawn.count, 3)
    }

    func testANoteLiftsTheBlockAndItIsDrawnAgainBelow() {
        var block = StatusBlock()
        _ = block.redraw(report(1), size: (80, 24))
        XCTAssertEqual(block.erase(), "\u{1B}[2A\r\u{1B}[J")
        XCTAssertFalse(block.isDrawn)
        XCTAssertEqual(block.drawAgain(), "[   1.0s] 1 view\n1 v1.mp4 PLAYING   0:01/0:24\n")
        XCTAssertTrue(block.isDrawn)
    }

    func testATypedCommandIsClearedWithTheBlock() {
        var block = StatusBlock()
        _ = block.redraw(report(1), size: (80, 24))
        block.lineEchoed()
        XCTAssertTrue(block.redraw(report(1), size: (80, 24)).hasPrefix("\u{1B}[3A\r\u{1B}[J"))
        XCTAssertTrue(block.redraw(report(1), size: (80, 24)).hasPrefix("\u{1B}[2A\r\u{1B}[J"))
    }

    func testTooManyViewsForTheHeightIsOneCompactLine() {
        var block = StatusBlock()
        let bytes = block.redraw(report(30), size: (100, 24))
        XCTAssertEqual(block.drawn.count, 1)
        XCTAssertEqual(bytes.filter { $0 == "\n" }.count, 1)
        XCTAssertLessThanOrEqual(block.drawn[0].count, 99)
    }
}
