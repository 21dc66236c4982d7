import Priority
import XCTest

/// `LinkFigure`: the link's label on the status line and the figure the allocator may use. Pure.
final class LinkFigureTests: XCTestCase {
    func testLabelsSayWhereTheFigureComesFrom() {
        XCTAssertEqual(LinkFigure.given(6_300_000).label, "link 6.3M (given)")
        XCTAssertEqual(LinkFigure.estimated(6_840_000).label, "link ~6.8M (est)")
        XCTAssertEqual(LinkFigure.measuring(nil).label, "link ? (measuring)")
        XCTAssertEqual(LinkFigure.measuring(2_000_000).label, "link ~2.0M (measuring)")
        XCTAssertEqual(LinkFigure.given(800_000).label, "link 800k (given)", "below 1 Mbit/s in kbit/s")
        XCTAssertEqual(LinkFigure.estimated(999_999).label, "link ~999k (est)")
        XCTAssertEqual(LinkFigure.given(1_000_000).label, "link 1.0M (given)")
    }

    func testOnlyAConfidentFigureIsAllocatedBy() {
        XCTAssertEqual(LinkFigure.given(5_000_000).bitsPerSecond, 5_000_000)
        XCTAssertEqual(LinkFigure.estimated(4_200_000).bitsPerSecond, 4_200_000)
        XCTAssertNil(LinkFigure.measuring(3_000_000).bitsPerSecond, "a figure still being measured is not used")
        XCTAssertNil(LinkFigure.measuring(nil).bitsPerSecond)
    }
}
