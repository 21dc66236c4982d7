import CXlib
import Foundation
import GStreamer
import Synchronization

/// One X11 window with one child window ("tile") per view, laid out in a grid.
///
/// Why X11 child windows and not GTK: each view's `ximagesink` draws into its tile from its own pipeline's
/// streaming thread, at the frame's clock time. A toolkit sink (gtksink) hands frames to the toolkit's main
/// loop instead, which adds that loop's scheduling to every view and would blur the sync we promise.
///
/// Threading: Xlib calls on our display connection happen only on this window's event thread after
/// `init` returns (init itself runs before the thread starts). Other threads talk to it through the
/// `Mutex`-protected `shared` state. Sinks use their own display connections.
public final class GridWindow: Sendable {
    public enum WindowError: Error, CustomStringConvertible {
        case noDisplay(String)
        public var description: String {
            switch self { case .noDisplay(let d): return "cannot open X display '\(d)'" }
        }
    }

    /// The tiles, in view order.
    public let tiles: [WindowTarget]
    /// Where each tile sits inside the window (x, y of its top-left corner), in view order.
    public let tileOrigins: [(x: Int, y: Int)]
    public let windowID: UInt
    public let width: Int
    public let height: Int

    private struct Shared {
        var running = true
        var messages: [Int: String] = [:]
        var redraw = false
    }
    private let shared = Mutex(Shared())
    /// The display connection: used only by the event thread (see above); a `Sendable` box around the pointer.
    private let connection: DisplayConnection

    private final class DisplayConnection: @unchecked Sendable {
        // Sendable: the pointer is only dereferenced by Xlib on the window's event thread, after init.
        let display: OpaquePointer
        init(_ display: OpaquePointer) { self.display = display }
    }

    /// Grid shape for `count` tiles: as square as possible, wider than tall.
    public static func gridShape(count: Int) -> (columns: Int, rows: Int) {
        guard count > 0 else { return (1, 1) }
        let columns = Int(Double(count).squareRoot().rounded(.up))
        let rows = (count + columns - 1) / columns
        return (columns, rows)
    }

    public init(tileCount: Int, tileWidth: Int = 480, tileHeight: Int = 270, title: String = "Multiview") throws {
        XInitThreads()
        let name = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        guard !name.isEmpty, let display = XOpenDisplay(nil) else { throw WindowError.noDisplay(name) }
        let screen = XDefaultScreen(display)
        let root = XRootWindow(display, screen)
        let black = XBlackPixel(display, screen)
        let gap = 2
        let (columns, rows) = GridWindow.gridShape(count: tileCount)
        width = columns * tileWidth + (columns + 1) * gap
        height = rows * tileHeight + (rows + 1) * gap
        let window = XCreateSimpleWindow(display, root, 0, 0, UInt32(width), UInt32(height), 0, black,
                                         0x303030) // dark grey frame around the tiles
        XStoreName(display, window, title)
        XSelectInput(display, window, KeyPressMask | StructureNotifyMask)
        var deleteAtom = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        XSetWMProtocols(display, window, &deleteAtom, 1)
        var tiles: [WindowTarget] = []
        var origins: [(x: Int, y: Int)] = []
        for index in 0..<tileCount {
            let x = gap + (index % columns) * (tileWidth + gap)
            let y = gap + (index / columns) * (tileHeight + gap)
            origins.append((x, y))
            let tile = XCreateSimpleWindow(display, window, Int32(x), Int32(y), UInt32(tileWidth), UInt32(tileHeight),
                                           0, black, black)
            // Key presses over a tile propagate to the parent; exposures let us redraw failure notes.
            XSelectInput(display, tile, ExposureMask)
            tiles.append(WindowTarget(handle: UInt(tile), width: tileWidth, height: tileHeight))
        }
        XMapSubwindows(display, window)
        XMapWindow(display, window)
        XSync(display, 0)
        self.tiles = tiles
        self.tileOrigins = origins
        self.windowID = UInt(window)
        self.connection = DisplayConnection(display)
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
            s.redraw = true
        }
    }

    /// Stops the event loop; the thread closes the display connection.
    public func close() {
        shared.withLock { $0.running = false }
    }

    private func eventLoop(onCommand: @Sendable (StageCommand) -> Void) {
        let display = connection.display
        let deleteAtom = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        var pollDescriptor = pollfd(fd: XConnectionNumber(display), events: Int16(POLLIN), revents: 0)
        // `a N` / `v N`: the letter picks the route, the digit that follows the view.
        var routeKey: Int32?
        while shared.withLock({ $0.running }) {
            while XPending(display) > 0 {
                var event = XEvent()
                XNextEvent(display, &event)
                switch event.type {
                case KeyPress:
                    // The shifted symbol when Shift is held: `?` and `*` are Shift+/ and Shift+8 on most layouts.
                    let shifted = event.xkey.state & UInt32(ShiftMask) != 0
                    let keysym = XLookupKeysym(&event.xkey, shifted ? 1 : 0)
                    let key = Int32(keysym)
                    if let pending = routeKey, key >= XK_0 && key <= XK_9 {
                        let number = key == XK_0 ? nil : Int(key - XK_0)
                        onCommand(pending == XK_a ? .preferAudio(number) : .preferExternal(number))
                        routeKey = nil
                        continue
                    }
                    routeKey = nil
                    if key == XK_a || key == XK_v {
                        routeKey = key
                    } else if let command = GridWindow.command(forKey: key) {
                        onCommand(command)
                    }
                case ClientMessage:
                    if UInt(event.xclient.data.l.0) == deleteAtom { onCommand(.quit) }
                case Expose:
                    shared.withLock { $0.redraw = true }
                default:
                    break
                }
            }
            let (redraw, messages) = shared.withLock { s -> (Bool, [Int: String]) in
                defer { s.redraw = false }
                return (s.redraw, s.messages)
            }
            if redraw { drawMessages(messages, display: display) }
            _ = poll(&pollDescriptor, 1, 100)
        }
        XDestroyWindow(display, Window(windowID))
        XCloseDisplay(display)
    }

    /// The command a key press stands for (keysyms as X11 names them), nil for a key that does nothing. `a` and
    /// `v` wait for a digit (the event loop handles them). Volume keys are mpv's `/` and `*`: mpv's other pair, 9
    /// and 0, are taken here by the views' priorities (`StageHelp.keys` lists them).
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

    private func drawMessages(_ messages: [Int: String], display: OpaquePointer) {
        let screen = XDefaultScreen(display)
        for (index, text) in messages where index < tiles.count {
            let tile = Window(tiles[index].handle)
            let gc = XCreateGC(display, tile, 0, nil)
            XSetForeground(display, gc, XWhitePixel(display, screen))
            var y: Int32 = 40
            for line in text.split(separator: "\n") {
                let s = String(line)
                XDrawString(display, tile, gc, 12, y, s, Int32(s.utf8.count))
                y += 16
            }
            XFreeGC(display, gc)
        }
        XFlush(display)
    }
}
