import CXlib
import Foundation

/// Draws the tiles' tags and failure notes with Xft (an anti-aliased font fontconfig picks, as pango does for
/// GStreamer's overlays), on the grid window's event thread only.
///
/// Why a label window of our own and not the pipeline's `textoverlay`: text burnt into the video changes only with
/// the next frame, so a paused view kept saying `playing`. A label is a small child window of the tile: the
/// view's `ximagesink` draws around it (X clips a window's drawing by its children), and the event thread redraws
/// it the moment the tag changes, whatever the pipeline is doing.
///
/// Xft and libXrender keep per-display state in process-wide lists without a lock of their own, and two windows'
/// threads may overlap (one ending, the next starting): every Xft call holds `TileLabels.xft`. (The lock alone did
/// not stop the crashes `releaseAndFlush` describes.)
final class TileLabels {
    static let xft = NSLock()

    /// The label's background: near-black, so white text reads over any picture.
    static let background: UInt = 0x1a1a1a
    private static let padding = (x: Int32(6), y: Int32(2))
    /// Space between the label and the tile's bottom-right corner.
    private static let margin: Int32 = 4

    private let display: OpaquePointer
    private let font: UnsafeMutablePointer<XftFont>?
    private var white = XftColor()
    private let hasColor: Bool
    private let visual: UnsafeMutablePointer<Visual>?
    private let colormap: Colormap

    init(display: OpaquePointer) {
        self.display = display
        let screen = XDefaultScreen(display)
        let visual = XDefaultVisual(display, screen), colormap = XDefaultColormap(display, screen)
        self.visual = visual
        self.colormap = colormap
        var render = XRenderColor(red: 0xffff, green: 0xffff, blue: 0xffff, alpha: 0xffff)
        var white = XftColor()
        let (font, hasColor) = TileLabels.xft.withLock {
            (XftFontOpenName(display, screen, "Sans:bold:pixelsize=14"),
             XftColorAllocValue(display, visual, colormap, &render, &white) != 0)
        }
        self.font = font
        self.hasColor = hasColor
        self.white = white
    }

    /// Shows `text` in `label` at the bottom-right of its `tileWidth`x`tileHeight` tile (unmapped when nil).
    func draw(_ text: String?, in label: Window, tileWidth: Int, tileHeight: Int) {
        TileLabels.xft.withLock { drawLocked(text, in: label, tileWidth: tileWidth, tileHeight: tileHeight) }
    }

    private func drawLocked(_ text: String?, in label: Window, tileWidth: Int, tileHeight: Int) {
        guard let text, !text.isEmpty, let font, hasColor else {
            XUnmapWindow(display, label)
            return
        }
        var bytes = Array(text.utf8)
        var extents = XGlyphInfo()
        XftTextExtentsUtf8(display, font, &bytes, Int32(bytes.count), &extents)
        let textHeight = font.pointee.ascent + font.pointee.descent
        // Never wider or taller than the tile (long tags are cut at the tile's left edge).
        let width = min(Int32(extents.xOff) + 2 * TileLabels.padding.x, Int32(max(tileWidth, 1)))
        let height = min(textHeight + 2 * TileLabels.padding.y, Int32(max(tileHeight, 1)))
        let x = max(0, Int32(tileWidth) - width - TileLabels.margin)
        let y = max(0, Int32(tileHeight) - height - TileLabels.margin)
        XMoveResizeWindow(display, label, x, y, UInt32(max(width, 1)), UInt32(max(height, 1)))
        XMapRaised(display, label)
        XClearWindow(display, label)
        guard let draw = XftDrawCreate(display, label, visual, colormap) else { return }
        XftDrawStringUtf8(draw, &white, font, TileLabels.padding.x, TileLabels.padding.y + font.pointee.ascent,
                          &bytes, Int32(bytes.count))
        XftDrawDestroy(draw)
    }

    /// A failure note, top-left in the tile itself (a failed view draws no video over it).
    func drawNote(_ text: String?, in tile: Window) {
        TileLabels.xft.withLock { drawNoteLocked(text, in: tile) }
    }

    private func drawNoteLocked(_ text: String?, in tile: Window) {
        XClearWindow(display, tile)
        guard let text, let font, hasColor, let draw = XftDrawCreate(display, tile, visual, colormap) else { return }
        var y = Int32(12) + font.pointee.ascent
        for line in text.split(separator: "\n") {
            var bytes = Array(line.utf8)
            XftDrawStringUtf8(draw, &white, font, 12, y, &bytes, Int32(bytes.count))
            y += font.pointee.ascent + font.pointee.descent + 2
        }
        XftDrawDestroy(draw)
    }

    /// Frees the font and colour and flushes; the display connection is left open on purpose. Closing a connection
    /// Xft had used crashed or hung the *next* grid window opened in the same process (X protocol errors on nonsense
    /// opcodes at that window's first Xft request, or its thread stuck; 4 of 7 runs of WindowFitTests, which open
    /// four windows one after another), as if per-display state outlived the closed `Display` and matched the new
    /// one at the same address. Left open: 5 of 5 runs clean. The CLI opens one window per process; tests leak
    /// one connection per window.
    func releaseAndFlush() {
        TileLabels.xft.withLock {
            if hasColor { XftColorFree(display, visual, colormap, &white) }
            if let font { XftFontClose(display, font) }
            XSync(display, 0)
        }
    }
}
