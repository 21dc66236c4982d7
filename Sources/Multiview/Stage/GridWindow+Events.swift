import CXlib
import Foundation

/// The grid window's event thread: keys, the window's new size (tiles laid out again), fullscreen, redrawing the
/// tags and failure notes. Everything here runs on that one thread (`multiview-x11`).
extension GridWindow {
    func eventLoop(onCommand: @Sendable (StageCommand) -> Void) {
        let display = connection.display
        let window = Window(windowID)
        let deleteAtom = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        let labels = TileLabels(display: display)
        var fullscreen = FullscreenState()
        var descriptors = [pollfd(fd: XConnectionNumber(display), events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
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
                    let key = Int32(XLookupKeysym(&event.xkey, shifted ? 1 : 0))
                    if let pending = routeKey, key >= XK_0 && key <= XK_9 {
                        let number = key == XK_0 ? nil : Int(key - XK_0)
                        onCommand(pending == XK_a ? .preferAudio(number) : .preferExternal(number))
                        routeKey = nil
                        continue
                    }
                    routeKey = nil
                    if key == XK_a || key == XK_v {
                        routeKey = key
                    } else if key == XK_f {
                        fullscreen.toggle(display: display, window: window, screen: (screenWidth, screenHeight))
                        shared.withLock { $0.fullscreen = fullscreen.isOn }
                    } else if let command = GridWindow.command(forKey: key) {
                        onCommand(command)
                    }
                case ClientMessage:
                    if UInt(event.xclient.data.l.0) == deleteAtom { onCommand(.quit) }
                case ConfigureNotify where event.xconfigure.window == window:
                    layOut(width: Int(event.xconfigure.width), height: Int(event.xconfigure.height), labels: labels)
                case Expose:
                    if let tile = connection.labelWindows.firstIndex(of: event.xexpose.window) {
                        shared.withLock { _ = $0.changedTags.insert(tile) }
                    } else {
                        shared.withLock { $0.redrawMessages = true }
                    }
                default:
                    break
                }
            }
            let toggles = shared.withLock { s -> Int in defer { s.fullscreenToggles = 0 }; return s.fullscreenToggles }
            if toggles % 2 == 1 {
                fullscreen.toggle(display: display, window: window, screen: (screenWidth, screenHeight))
                shared.withLock { $0.fullscreen = fullscreen.isOn }
            }
            drawPending(display: display, labels: labels)
            XFlush(display)
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            _ = poll(&descriptors, 2, 100)
            if descriptors[1].revents != 0 { drainWakePipe() }
        }
        XDestroyWindow(display, window)
        labels.releaseAndFlush()
        // The wake pipe stays open until deinit: another thread may still set a tag, and a closed descriptor's
        // number is soon reused (by a sink's X connection, whose request stream one stray byte would corrupt).
    }

    /// The window is now `width`x`height`: lays the tiles out for it (nothing when it is the size they were laid
    /// out for, e.g. a move), moves them, and tells each view whose tile changed size.
    private func layOut(width: Int, height: Int, labels: TileLabels) {
        let display = connection.display
        let (old, next) = shared.withLock { s -> (GridLayout, GridLayout?) in
            guard width != s.layout.width || height != s.layout.height else { return (s.layout, nil) }
            let next = GridLayout.fitting(count: connection.tileWindows.count, width: width, height: height, aspect: aspect)
            return (s.layout, next)
        }
        guard let next else { return }
        for (index, frame) in next.tiles.enumerated() where index < connection.tileWindows.count {
            XMoveResizeWindow(display, connection.tileWindows[index], Int32(frame.x), Int32(frame.y),
                              UInt32(frame.width), UInt32(frame.height))
        }
        let handlers = shared.withLock { s -> [Int: @Sendable (Int, Int) -> Void] in
            s.layout = next
            // Labels sit at their tile's bottom-right corner: redraw them all at the new place.
            s.changedTags.formUnion(s.tags.keys)
            s.redrawMessages = true
            return s.resizeHandlers
        }
        for (index, frame) in next.tiles.enumerated() where index < old.tiles.count {
            guard frame.width != old.tiles[index].width || frame.height != old.tiles[index].height else { continue }
            handlers[index]?(frame.width, frame.height)
        }
    }

    private func drawPending(display: OpaquePointer, labels: TileLabels) {
        let (changed, tags, messages, redrawMessages, layout) = shared.withLock { s in
            defer { s.changedTags = []; s.redrawMessages = false }
            return (s.changedTags, s.tags, s.messages, s.redrawMessages, s.layout)
        }
        var drawn: [Int: String?] = [:]
        for tile in changed where tile < connection.labelWindows.count && tile < layout.tiles.count {
            let frame = layout.tiles[tile]
            labels.draw(tags[tile], in: connection.labelWindows[tile], tileWidth: frame.width, tileHeight: frame.height)
            drawn[tile] = tags[tile]
        }
        if !drawn.isEmpty {
            shared.withLock { s in for (tile, text) in drawn { s.drawnTags[tile] = text } }
        }
        if redrawMessages {
            for (index, text) in messages where index < connection.tileWindows.count {
                labels.drawNote(text, in: connection.tileWindows[index])
            }
        }
    }

    private func drainWakePipe() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakePipe.read, &buffer, buffer.count) > 0 {}
    }
}

/// Fullscreen on and off, on the event thread. With a window manager (one that announces itself through
/// `_NET_SUPPORTING_WM_CHECK`), the EWMH way: ask it for `_NET_WM_STATE_FULLSCREEN`, it resizes the window and
/// hides its frame and panels. Without one (Xvfb in tests, a bare X server) nobody would act on that request, so
/// the window itself is moved to (0, 0) at the screen's size, and back to where it was.
struct FullscreenState {
    private(set) var isOn = false
    private var saved: (x: Int32, y: Int32, width: UInt32, height: UInt32)?

    mutating func toggle(display: OpaquePointer, window: Window, screen: (width: Int, height: Int)) {
        if FullscreenState.windowManagerPresent(display) {
            requestFromWindowManager(display: display, window: window, on: !isOn)
        } else if isOn, let saved {
            XMoveResizeWindow(display, window, saved.x, saved.y, saved.width, saved.height)
        } else {
            var attributes = XWindowAttributes()
            XGetWindowAttributes(display, window, &attributes)
            saved = (attributes.x, attributes.y, UInt32(attributes.width), UInt32(attributes.height))
            XMoveResizeWindow(display, window, 0, 0, UInt32(screen.width), UInt32(screen.height))
            XRaiseWindow(display, window)
        }
        isOn.toggle()
    }

    /// `_NET_WM_STATE` client message to the root window: action 1 adds, 0 removes the fullscreen state.
    private func requestFromWindowManager(display: OpaquePointer, window: Window, on: Bool) {
        let root = XDefaultRootWindow(display)
        var event = XEvent()
        event.xclient.type = ClientMessage
        event.xclient.window = window
        event.xclient.message_type = XInternAtom(display, "_NET_WM_STATE", 0)
        event.xclient.format = 32
        event.xclient.data.l.0 = on ? 1 : 0
        event.xclient.data.l.1 = Int(XInternAtom(display, "_NET_WM_STATE_FULLSCREEN", 0))
        event.xclient.data.l.2 = 0
        event.xclient.data.l.3 = 1   // source: a normal application
        XSendEvent(display, root, 0, SubstructureRedirectMask | SubstructureNotifyMask, &event)
    }

    /// A window manager is running when the root window's `_NET_SUPPORTING_WM_CHECK` names a window.
    static func windowManagerPresent(_ display: OpaquePointer) -> Bool {
        let atom = XInternAtom(display, "_NET_SUPPORTING_WM_CHECK", 1)
        guard atom != 0 else { return false }
        let windowAtom: Atom = 33   // XA_WINDOW (Xatom.h's cast macro does not import into Swift)
        var type: Atom = 0, format: Int32 = 0
        var count: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>?
        let status = XGetWindowProperty(display, XDefaultRootWindow(display), atom, 0, 1, 0, windowAtom, &type, &format,
                                        &count, &after, &data)
        defer { if let data { XFree(data) } }
        return status == Success && type == windowAtom && count == 1
    }
}
