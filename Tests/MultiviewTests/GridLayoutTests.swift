import XCTest
@testable import Multiview

/// The grid layout alone: pure arithmetic, no X server, no pipeline (runs in milliseconds).
final class GridLayoutTests: XCTestCase {
    private func assertInside(_ layout: GridLayout, width: Int, height: Int, file: StaticString = #filePath,
                              line: UInt = #line) {
        for (index, tile) in layout.tiles.enumerated() {
            XCTAssertGreaterThanOrEqual(tile.x, 0, "tile \(index + 1)", file: file, line: line)
            XCTAssertGreaterThanOrEqual(tile.y, 0, "tile \(index + 1)", file: file, line: line)
            XCTAssertLessThanOrEqual(tile.x + tile.width, width, "tile \(index + 1) \(tile)", file: file, line: line)
            XCTAssertLessThanOrEqual(tile.y + tile.height, height, "tile \(index + 1) \(tile)", file: file, line: line)
        }
    }

    private func assertNoOverlap(_ layout: GridLayout, file: StaticString = #filePath, line: UInt = #line) {
        for (i, a) in layout.tiles.enumerated() {
            for b in layout.tiles[(i + 1)...] {
                let apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y
                XCTAssertTrue(apart, "\(a) overlaps \(b)", file: file, line: line)
            }
        }
    }

    func testTwentyViewsFitOn1080p() {
        let layout = GridLayout.fitting(count: 20, width: 1920, height: 1080)
        XCTAssertEqual(layout.tiles.count, 20)
        assertInside(layout, width: 1920, height: 1080)
        assertNoOverlap(layout)
        // 4 rows of 5 at 16:9: each tile about 381x214.
        XCTAssertTrue(layout.tiles.allSatisfy { $0.width >= 370 && $0.height >= 208 }, "\(layout.tiles)")
        XCTAssertGreaterThan(layout.coverage, 0.75)
    }

    func testFiveViewsUseMostOf1080p() {
        let layout = GridLayout.fitting(count: 5, width: 1920, height: 1080)
        assertInside(layout, width: 1920, height: 1080)
        assertNoOverlap(layout)
        // Video (tiles are 16:9, so all of a tile is video) covers more than two thirds of the screen.
        XCTAssertGreaterThan(layout.coverage, 2.0 / 3.0, "\(layout.tiles)")
        // Two larger tiles above three.
        XCTAssertEqual(Set(layout.tiles.prefix(2).map(\.y)).count, 1)
        XCTAssertEqual(Set(layout.tiles.suffix(3).map(\.y)).count, 1)
        XCTAssertGreaterThan(layout.tiles[0].width, layout.tiles[4].width)
    }

    func testNineViewsAreAThreeByThreeGridFillingTheScreen() {
        let layout = GridLayout.fitting(count: 9, width: 1920, height: 1080)
        XCTAssertEqual(Set(layout.tiles.map(\.y)).count, 3)
        XCTAssertEqual(Set(layout.tiles.map(\.width)).count, 1, "one tile size")
        XCTAssertGreaterThan(layout.coverage, 0.95)
        assertInside(layout, width: 1920, height: 1080)
    }

    func testTilesKeepTheAspectRatio() {
        for count in 1...24 {
            for (width, height) in [(1920, 1080), (1280, 1024), (800, 1200), (3840, 1080)] {
                let layout = GridLayout.fitting(count: count, width: width, height: height)
                XCTAssertEqual(layout.tiles.count, count)
                assertInside(layout, width: width, height: height)
                assertNoOverlap(layout)
                for tile in layout.tiles {
                    XCTAssertEqual(Double(tile.width) / Double(tile.height), 16.0 / 9.0, accuracy: 0.02,
                                   "\(count) views in \(width)x\(height): \(tile)")
                }
            }
        }
    }

    func testEveryCountFillsTheScreenBetterThanTheSquareGrid() {
        // The square grid of equal cells (the old layout, fitted to the screen) is among the shapes tried: never worse.
        for count in 1...24 {
            let layout = GridLayout.fitting(count: count, width: 1920, height: 1080)
            let (columns, rows) = GridLayout.gridShape(count: count)
            let cellWidth = min(Double(1920 - (columns + 1) * 2) / Double(columns),
                                Double(1080 - (rows + 1) * 2) / Double(rows) * 16 / 9)
            let squareArea = Double(count) * cellWidth * cellWidth * 9 / 16
            XCTAssertGreaterThanOrEqual(layout.coverage * 1920 * 1080, squareArea * 0.98, "\(count) views")
        }
    }

    func testFixedTilesKeepTheirSize() {
        let layout = GridLayout.fixed(count: 5, tileWidth: 480, tileHeight: 270)
        XCTAssertEqual(layout.tiles.map(\.width), Array(repeating: 480, count: 5))
        XCTAssertEqual(layout.width, 3 * 480 + 4 * 2)
        XCTAssertEqual(layout.height, 2 * 270 + 3 * 2)
        XCTAssertEqual(layout.tiles[3], GridLayout.Frame(x: 2, y: 274, width: 480, height: 270))
    }

    func testShrunkToTilesDropsTheEmptyBand() {
        let layout = GridLayout.fitting(count: 5, width: 1920, height: 1080).shrunkToTiles()
        XCTAssertEqual(layout.width, 1920)
        XCTAssertLessThan(layout.height, 1080)
        XCTAssertEqual(layout.tiles.map(\.y).min(), GridLayout.gap)
        XCTAssertEqual(layout.tiles.map { $0.y + $0.height }.max(), layout.height - GridLayout.gap)
        // Laid out again in its own size, the same tiles within a pixel (rounding).
        let again = GridLayout.fitting(count: 5, width: layout.width, height: layout.height)
        for (a, b) in zip(again.tiles, layout.tiles) {
            XCTAssertLessThanOrEqual(abs(a.width - b.width), 1, "\(a) vs \(b)")
            XCTAssertLessThanOrEqual(abs(a.height - b.height), 1, "\(a) vs \(b)")
        }
    }

    func testDegenerateAreas() {
        XCTAssertEqual(GridLayout.fitting(count: 0, width: 1920, height: 1080).tiles, [])
        XCTAssertEqual(GridLayout.fitting(count: 3, width: 3, height: 3).tiles, [])
        let tiny = GridLayout.fitting(count: 20, width: 40, height: 30)
        XCTAssertEqual(tiny.tiles.count, 20)
        XCTAssertTrue(tiny.tiles.allSatisfy { $0.width >= 1 && $0.height >= 1 })
    }
}
