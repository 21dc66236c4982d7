import CXlib
import Foundation
import GStreamer
import Synchronization

/// One X11 window with one child window ("tile") per view, laid out by `GridLayout`, and over each tile a small
/// label window showing the view's tag.
///
/// Why X11 child windows and not GTK: each view's `ximagesink` draws into its tile from its own pipeline's
/// streaming thread, at the frame's clock time. A toolkit sink (gtksink) hands frames to the toolkit's main
/// loop instead, which adds that loop's scheduling to every view and would blur the sync we promise.
///
/// Size: `.fixed` tiles as `--tile WxH` asks (the window as big as the grid); `.fitScreen` tiles as big as the
/// screen allows for that many views. When the window's size changes (the user, the window manager, `f`
/// fullscreen) the tiles are laid out again for the new size and each view is told its tile's new size.
///
/// Threading: Xlib calls on our display connection happen only on this window's event thread after `init`
/// returns (init itself runs before the thread starts). Other threads talk to it through the `Mutex`-protected
/// `shared` state and wake it through a pipe. Sinks use their own display connections.
public final class GridWindow: Sendable {
    public enum WindowError: Error, CustomStringConvertible {
        case noDisplay(String)
        public var description: String {
            switch self { case .noDisplay(let d): return "cannot open X display '\(d)'" }
        }
    }

    /// How big the tiles are.
    public enum TileSizing: Sendable, Equatable {
        /// Every tile this size (`--tile WxH`); the window is as big as the grid.
        case fixed(width: Int, height: Int)
        /// Tiles as big as the screen allows (16:9), the window as big as the tiles.
        case fitScreen
    }

    public let windowID: UInt
    /// The X screen's size in pixels.
    public let screenWidth: Int
    public let screenHeight: Int
    /// The tiles' aspect ratio (width / height) when laid out again.
    let aspect: Double

    struct Shared {
        var running = true
        var messages: [Int: String] = [:]
        var redrawMessages = false
        /// The tag each tile is to show (nil: no label).
        var tags: [Int: String] = [:]
        /// Tiles whose tag changed since the event thread last drew them.
        var changedTags: Set<Int> = []
        /// What each tile's label shows now (drawn by the event thread): what a user sees.
        var drawnTags: [Int: String] = [:]
        var layout: GridLayout
        var fullscreen = false
        var fullscreenToggles = 0
        /// Told the tile's new size when the tiles are laid out again (a view's sink rescales its video).
        var resizeHandlers: [Int: @Sendable (Int, Int) -> Void] = [:]
    }
    let shared: Mutex<Shared>
    /// The display connection and the X resources made in `init`: used only by the event thread (see above).
    let connection: DisplayConnection
    /// Written by other threads to wake the event thread out of `poll`; read (drained) by it.
    let wakePipe: (read: Int32, write: Int32)

    final class DisplayConnection: @unchecked Sendable {
        // Sendable: the pointers and ids are only used by Xlib on the window's event thread, after init.
        let display: OpaquePointer
        let tileWindows: [Window]
        let labelWindows: [Window]
        init(_ display: OpaquePointer, tiles: [Window], labels: [Window]) {
            self.display = display; self.tileWindows = tiles; self.labelWindows = labels
        }
    }

    /// Grid shape for `count` tiles: as square as possible, wider than tall (the `.fixed` layout).
    public static func gridShape(count: Int) -> (columns: Int, rows: Int) { GridLayout.gridShape(count: count) }

    public convenience init(tileCount: Int, tileWidth: Int = 480, tileHeight: Int = 270, title: String = "Multiview") throws {
        try self.init(tileCount: tileCount, sizing: .fixed(width: tileWidth, height: tileHeight), title: title)
    }

    public init(tileCount: Int, sizing: TileSizing, title: String = "Multiview") throws {
        XInitThreads()
        let name = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        guard !name.isEmpty, let display = XOpenDisplay(nil) else { throw WindowError.noDisplay(name) }
        let screen = XDefaultScreen(display)
        let root = XRootWindow(display, screen)
        let black = XBlackPixel(display, screen)
        screenWidth = Int(XDisplayWidth(display, screen))
        screenHeight = Int(XDisplayHeight(display, screen))
        let layout: GridLayout
        var origin = (x: Int32(0), y: Int32(0))
        switch sizing {
        case .fixed(let width, let height):
            layout = GridLayout.fixed(count: tileCount, tileWidth: width, tileHeight: height)
            aspect = Double(width) / Double(height)
        case .fitScreen:
            // The desktop's work area (the screen less the panels) when a window manager publishes one.
            let area = GridWindow.workArea(display, root: root)
                ?? (x: 0, y: 0, width: Int(XDisplayWidth(display, screen)), height: Int(XDisplayHeight(display, screen)))
            layout = GridLayout.fitting(count: tileCount, width: area.width, height: area.height).shrunkToTiles()
            origin = (Int32(area.x), Int32(area.y))
            aspect = GridLayout.defaultAspect
        }
        let window = XCreateSimpleWindow(display, root, origin.x, origin.y, UInt32(max(layout.width, 1)), UInt32(max(layout.height, 1)),
                                         0, black, 0x303030) // dark grey frame around the tiles
        XStoreName(display, window, title)
        XSelectInput(display, window, KeyPressMask | StructureNotifyMask)
        var deleteAtom = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        XSetWMProtocols(display, window, &deleteAtom, 1)
        var tiles: [Window] = [], labels: [Window] = []
        for frame in layout.tiles {
            let tile = XCreateSimpleWindow(display, window, Int32(frame.x), Int32(frame.y), UInt32(frame.width),
                                           UInt32(frame.height), 0, black, black)
            // Key presses over a tile propagate to the parent; exposures let us redraw failure notes.
            XSelectInput(display, tile, ExposureMask)
            // The tag's label: a child of the tile, so it moves with it; the sink's drawing is clipped around it.
            let label = XCreateSimpleWindow(display, tile, 0, 0, 1, 1, 0, black, TileLabels.background)
            XSelectInput(display, label, ExposureMask)
            tiles.append(tile)
            labels.append(label)
        }
        XMapSubwindows(display, window)
        XMapWindow(display, window)
        XSync(display, 0)
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        }
        wakePipe = (fds[0], fds[1])
        shared = Mutex(Shared(layout: layout))
        windowID = UInt(window)
        connection = DisplayConnection(display, tiles: tiles, labels: labels)
    }

    deinit {
        // Nobody can wake the event thread any more (it held `self` until it ended).
        if wakePipe.read >= 0 { Glibc.close(wakePipe.read) }
        if wakePipe.write >= 0 { Glibc.close(wakePipe.write) }
    }

    /// EWMH `_NET_WORKAREA` of the first desktop (x, y, width, height), nil without one or when it is degenerate.
    static func workArea(_ display: OpaquePointer, root: Window) -> (x: Int, y: Int, width: Int, height: Int)? {
        let atom = XInternAtom(display, "_NET_WORKAREA", 1)
        guard atom != 0 else { return nil }
        let cardinal: Atom = 6   // XA_CARDINAL (Xatom.h's cast macro does not import into Swift)
        var type: Atom = 0, format: Int32 = 0
        var count: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        let status = XGetWindowProperty(display, root, atom, 0, 4, 0, cardinal, &type, &format, &count, &after, &data)
        defer { if let data { XFree(data) } }
        guard status == Success, type == cardinal, format == 32, count >= 4, let data else { return nil }
        // Format-32 properties come back as C longs.
        let values = data.withMemoryRebound(to: Int.self, capacity: 4) { Array(UnsafeBufferPointer(start: $0, count: 4)) }
        guard values[2] > 2 * GridLayout.gap, values[3] > 2 * GridLayout.gap else { return nil }
        return (values[0], values[1], values[2], values[3])
    }

    // MARK: What other threads may read and ask

    /// The current layout (it changes when the window is resized).
    public var layout: GridLayout { shared.withLock { $0.layout } }
    /// The tiles, in view order, at their current size.
    public var tiles: [WindowTarget] {
        let frames = layout.tiles
        return zip(connection.tileWindows, frames).map { WindowTarget(handle: UInt($0), width: $1.width, height: $1.height) }
    }
    /// Where each tile sits inside the window (x, y of its top-left corner), in view order.
    public var tileOrigins: [(x: Int, y: Int)] { layout.tiles.map { ($0.x, $0.y) } }
    /// The window's size as last laid out.
    public var width: Int { layout.width }
    public var height: Int { layout.height }
    public var isFullscreen: Bool { shared.withLock { $0.fullscreen } }

    /// Tile `index` for a view's sink, and `onResize` told each later size of the tile (on the window's event
    /// thread). One lock: no layout can fall between reading the size and registering.
    public func attachTile(_ index: Int, onResize: @escaping @Sendable (_ width: Int, _ height: Int) -> Void) -> WindowTarget? {
        shared.withLock { s in
            guard index < s.layout.tiles.count, index < connection.tileWindows.count else { return nil }
            s.resizeHandlers[index] = onResize
            let frame = s.layout.tiles[index]
            return WindowTarget(handle: UInt(connection.tileWindows[index]), width: frame.width, height: frame.height)
        }
    }

    /// Runs the event loop on a thread of its own; key presses become stage commands.
    public func start(onCommand: @escaping @Sendable (StageCommand) -> Void) {
        let thread = Thread { [self] in self.eventLoop(onCommand: onCommand) }
        thread.name = "multiview-x11"
        thread.start()
    }

    /// Shows a text note in a tile (e.g. why the view failed). Thread-safe.
    public func setMessage(_ text: String?, tile: Int) {
        shared.withLock { s in
            s.messages[tile] = text
            s.redrawMessages = true
        }
        wake()
    }

    /// Sets the tag tile `tile` shows (nil: none); drawn by the event thread at once. Thread-safe.
    public func setTag(_ text: String?, tile: Int) {
        let changed = shared.withLock { s -> Bool in
            guard s.tags[tile] != text else { return false }
            s.tags[tile] = text
            s.changedTags.insert(tile)
            return true
        }
        if changed { wake() }
    }

    /// What tile `tile`'s label shows now (nil: no label drawn).
    public func drawnTag(tile: Int) -> String? { shared.withLock { $0.drawnTags[tile] } }

    /// The note tile `tile` shows now (`setMessage`), nil for none. Thread-safe.
    public func message(tile: Int) -> String? { shared.withLock { $0.messages[tile] } }

    /// `f`: fullscreen on, or back to the window it was. Thread-safe.
    public func toggleFullscreen() {
        shared.withLock { $0.fullscreenToggles += 1 }
        wake()
    }

    /// Stops the event loop; the thread closes the display connection.
    public func close() {
        shared.withLock { $0.running = false }
        wake()
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)   // full pipe: the thread has wake-ups pending anyway
    }

    /// The command a key press stands for (keysyms as X11 names them), nil for a key that does nothing. `a` and
    /// `v` wait for a digit and `f` toggles fullscreen (the event loop handles them). Volume keys are mpv's `/` and
    /// `*`: mpv's other pair, 9 and 0, are taken here by the views' priorities (`StageHelp.keys` lists them).
    public static func command(forKey key: Int32) -> StageCommand? {
        switch key {
        case XK_space: return .togglePause
        case XK_Left: return .seekBy(-10)
        case XK_Right: return .seekBy(10)
        case XK_q, XK_Escape: return .quit
        case XK_1...XK_9: return .priority(view: Int(key - XK_1) + 1, level: "next")
        case XK_m: return .toggleMute(view: nil)
        case XK_slash, XK_KP_Divide: return .changeVolume(by: -10)
        case XK_asterisk, XK_KP_Multiply: return .changeVolume(by: 10)
        case XK_question, XK_h: return .help
        default: return nil
        }
    }
}
