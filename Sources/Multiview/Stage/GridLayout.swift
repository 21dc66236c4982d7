/// Where each tile of the grid window sits, in window coordinates. Pure: no X, no GStreamer.
///
/// Two ways to lay tiles out:
/// - `fixed`: every tile the size `--tile WxH` asked for, in a grid as square as possible (the window is as big as
///   the grid, whatever the screen);
/// - `fitting`: tiles as big as an area allows (the screen at start, the window after the user resized it), each
///   at the video's aspect ratio, in rows. Rows may hold different numbers of tiles: 5 views on 1920x1080 as 2 over
///   3 (video on 83 % of the screen) rather than a 3x2 grid with one empty cell (55 %).
public struct GridLayout: Sendable, Equatable {
    /// One tile: top-left corner and size, in pixels.
    public struct Frame: Sendable, Equatable {
        public var x: Int, y: Int, width: Int, height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x; self.y = y; self.width = width; self.height = height
        }
        public var area: Int { width * height }
    }

    /// The tiles, in view order.
    public var tiles: [Frame]
    /// The smallest rectangle from (0, 0) that holds every tile with its gap: the window's natural size.
    public var width: Int
    public var height: Int

    /// Pixels between tiles and around them (the window's dark frame shows there).
    public static let gap = 2
    /// The aspect ratio `fitting` assumes when told none: the bundled media and most video are 16:9; other
    /// shapes are letterboxed inside their tile (videoscale adds the borders).
    public static let defaultAspect = 16.0 / 9.0

    /// Columns and rows of a grid as square as possible, wider than tall.
    public static func gridShape(count: Int) -> (columns: Int, rows: Int) {
        guard count > 0 else { return (1, 1) }
        let columns = Int(Double(count).squareRoot().rounded(.up))
        let rows = (count + columns - 1) / columns
        return (columns, rows)
    }

    /// Every tile `tileWidth`x`tileHeight`, in `gridShape(count:)` columns and rows.
    public static func fixed(count: Int, tileWidth: Int, tileHeight: Int) -> GridLayout {
        let (columns, rows) = gridShape(count: count)
        let tiles = (0..<max(count, 0)).map { index in
            Frame(x: gap + (index % columns) * (tileWidth + gap), y: gap + (index / columns) * (tileHeight + gap),
                  width: tileWidth, height: tileHeight)
        }
        return GridLayout(tiles: tiles, width: columns * tileWidth + (columns + 1) * gap,
                          height: rows * tileHeight + (rows + 1) * gap)
    }

    /// `count` tiles at `aspect` (width / height) as big as a `width`x`height` area allows, centred in it. Tries
    /// every number of rows, each row holding `count / rows` or one more tiles (the fuller rows last, so the first
    /// views get the larger tiles), each row as wide as the area, the whole scaled down to the area's height when
    /// it is taller; keeps the shape that shows the most video (ties: the more even tile sizes).
    public static func fitting(count: Int, width: Int, height: Int, aspect: Double = defaultAspect) -> GridLayout {
        guard count > 0, width > 2 * gap, height > 2 * gap, aspect > 0 else {
            return GridLayout(tiles: [], width: max(width, 0), height: max(height, 0))
        }
        var best: GridLayout?
        var bestScore = (area: -1, evenness: 0.0)
        // Rows of different sizes (5 = 2 over 3), and the plain grid of equal tiles with a shorter last row
        // (3 = 2 over 1, the last one centred), for every number of rows or columns.
        let shapes = (1...count).map { (counts: rowCounts(count: count, rows: $0), columns: Int?.none) }
            + (1...count).map { columns in
                let full = count / columns, rest = count % columns
                return (counts: Array(repeating: columns, count: full) + (rest > 0 ? [rest] : []), columns: Int?.some(columns))
            }
        for shape in shapes {
            let candidate = rowsLayout(shape.counts, width: width, height: height, aspect: aspect, columns: shape.columns)
            let area = candidate.tiles.reduce(0) { $0 + $1.area }
            let areas = candidate.tiles.map(\.area)
            let evenness = Double(areas.min() ?? 0) / Double(max(areas.max() ?? 1, 1))
            // More than 1 % more video wins; within 1 %, the more even sizes.
            let better = Double(area) > Double(bestScore.area) * 1.01
                || (Double(area) >= Double(bestScore.area) * 0.99 && evenness > bestScore.evenness + 1e-9)
            if best == nil || better {
                best = candidate
                bestScore = (area, evenness)
            }
        }
        return best!
    }

    /// `count` split into `rows` rows whose sizes differ by at most one, the smaller rows first.
    public static func rowCounts(count: Int, rows: Int) -> [Int] {
        let base = count / rows, fuller = count % rows
        return Array(repeating: base, count: rows - fuller) + Array(repeating: base + 1, count: fuller)
    }

    /// Rows of `counts[i]` tiles each, every row filling the width (or, given `columns`, every tile as wide as in a
    /// row of that many), scaled to the height, centred in the area.
    static func rowsLayout(_ counts: [Int], width: Int, height: Int, aspect: Double, columns: Int? = nil) -> GridLayout {
        let g = Double(gap)
        // Unscaled: each row's tiles share the full width.
        let tileWidths = counts.map { k in
            let across = columns ?? k
            return (Double(width) - Double(across + 1) * g) / Double(across)
        }
        let tileHeights = tileWidths.map { $0 / aspect }
        let spareHeight = Double(height) - Double(counts.count + 1) * g
        let scale = min(1, spareHeight / tileHeights.reduce(0, +))
        let sizes = zip(tileWidths, tileHeights).map { (w: max(1, Int(($0 * scale).rounded(.down))),
                                                        h: max(1, Int(($1 * scale).rounded(.down)))) }
        let blockHeight = sizes.reduce(0) { $0 + $1.h } + (counts.count + 1) * gap
        var y = max(0, (height - blockHeight) / 2) + gap
        var tiles: [Frame] = []
        for (row, k) in counts.enumerated() {
            let size = sizes[row]
            let rowWidth = k * size.w + (k + 1) * gap
            var x = max(0, (width - rowWidth) / 2) + gap
            for _ in 0..<k {
                tiles.append(Frame(x: x, y: y, width: size.w, height: size.h))
                x += size.w + gap
            }
            y += size.h + gap
        }
        return GridLayout(tiles: tiles, width: width, height: height)
    }

    /// The layout moved so its tiles' bounding box (with the gap around it) starts at (0, 0), and sized to that
    /// box: the window's size when it opens, so it shows no empty band around the tiles.
    public func shrunkToTiles() -> GridLayout {
        guard let minX = tiles.map(\.x).min(), let minY = tiles.map(\.y).min(),
              let maxX = tiles.map({ $0.x + $0.width }).max(), let maxY = tiles.map({ $0.y + $0.height }).max()
        else { return self }
        let dx = minX - GridLayout.gap, dy = minY - GridLayout.gap
        return GridLayout(tiles: tiles.map { Frame(x: $0.x - dx, y: $0.y - dy, width: $0.width, height: $0.height) },
                          width: maxX - dx + GridLayout.gap, height: maxY - dy + GridLayout.gap)
    }

    /// Share of the layout's area the tiles cover (0…1).
    public var coverage: Double {
        guard width > 0, height > 0 else { return 0 }
        return Double(tiles.reduce(0) { $0 + $1.area }) / Double(width * height)
    }
}
