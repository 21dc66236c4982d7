import CXlib
import Foundation

/// The external display route's screen: one window filling an X display of its own (a second Xvfb standing for
/// the TV). Views draw into it with their own `ximagesink` (own display connections), only the view whose valve
/// is open; so this class only creates, maps and finally destroys the window.
///
/// `@unchecked Sendable`: the display pointer is used only in `init` and in `close()`, which a `Mutex` makes
/// run once; no event loop runs on it (the window takes no input).
public final class ExternalDisplayWindow: @unchecked Sendable {
    public enum WindowError: Error, CustomStringConvertible {
        case noDisplay(String)
        public var description: String {
            switch self { case .noDisplay(let d): return "cannot open the external X display '\(d)'" }
        }
    }

    public let display: String
    public let windowID: UInt
    public let width: Int
    public let height: Int
    private let connection: OpaquePointer
    private let closed = NSLock()
    private var isClosed = false

    public init(display: String, width: Int = 1280, height: Int = 720) throws {
        XInitThreads()
        guard let connection = XOpenDisplay(display) else { throw WindowError.noDisplay(display) }
        let screen = XDefaultScreen(connection)
        let root = XRootWindow(connection, screen)
        let window = XCreateSimpleWindow(connection, root, 0, 0, UInt32(width), UInt32(height), 0,
                                         XBlackPixel(connection, screen), XBlackPixel(connection, screen))
        XStoreName(connection, window, "Multiview external display")
        XMapWindow(connection, window)
        XSync(connection, 0)
        self.display = display
        self.connection = connection
        self.windowID = UInt(window)
        self.width = width
        self.height = height
    }

    deinit { close() }

    /// The size of an X display's first screen, nil when it does not answer.
    public static func probe(display: String) -> (width: Int, height: Int)? {
        guard let connection = XOpenDisplay(display) else { return nil }
        defer { XCloseDisplay(connection) }
        let screen = XDefaultScreen(connection)
        return (Int(XDisplayWidth(connection, screen)), Int(XDisplayHeight(connection, screen)))
    }

    /// X displays with a local socket (/tmp/.X11-unix/XN), as ":N", in number order.
    public static func localDisplays() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp/.X11-unix")) ?? []
        return names.compactMap { $0.hasPrefix("X") ? Int($0.dropFirst()) : nil }.sorted().map { ":\($0)" }
    }

    public func close() {
        closed.lock()
        defer { closed.unlock() }
        guard !isClosed else { return }
        isClosed = true
        XDestroyWindow(connection, Window(windowID))
        XCloseDisplay(connection)
    }
}
