import Foundation
import Multiview

/// The status on a terminal: a block at the bottom of the output, one line per view under a line with the elapsed
/// time, redrawn in place (cursor up, clear to the end of the screen, the new lines). When the views do not fit the
/// terminal's height, one compact line instead. Each line is clipped to the width, so no line wraps and the cursor
/// arithmetic stays right.
///
/// Pure: it returns the bytes to write (`StatusBlockTests`). Owner: the `TerminalReporter`'s `Mutex`.
struct StatusBlock {
    /// The lines drawn now (the cursor is on the line below them).
    private(set) var drawn: [String] = []
    /// The lines last drawn, kept while another line is written above them.
    private var lifted: [String] = []
    /// Lines the terminal echoed under the block since it was drawn (commands typed on stdin, with their Enter).
    private var echoedBelow = 0

    var isDrawn: Bool { !drawn.isEmpty }

    /// The bytes that replace the block drawn now by `report`.
    mutating func redraw(_ report: StageStatus, size: (columns: Int, rows: Int)) -> String {
        let columns = max(size.columns, 20)
        var lines = report.lines(width: columns - 1)
        if lines.count > max(size.rows - 2, 1) { lines = [report.compactLine(width: columns - 1)] }
        let bytes = erase() + lines.map { $0 + "\n" }.joined()
        drawn = lines
        lifted = []
        return bytes
    }

    /// The bytes that clear the block (the cursor goes to its first line): a line can then be written there.
    mutating func erase() -> String {
        guard !drawn.isEmpty else { return "" }
        let bytes = "\u{1B}[\(drawn.count + echoedBelow)A\r\u{1B}[J"
        echoedBelow = 0
        lifted = drawn
        drawn = []
        return bytes
    }

    /// A line typed on the terminal (echoed by it, not by us) moved the cursor down one more line: the next
    /// redraw goes that much further up, and the typed line is cleared with the block.
    mutating func lineEchoed() {
        if !drawn.isEmpty { echoedBelow += 1 }
    }

    /// The bytes that draw the block erased by `erase()` again, below what was written meanwhile.
    mutating func drawAgain() -> String {
        drawn = lifted
        lifted = []
        return drawn.map { $0 + "\n" }.joined()
    }
}

/// Whether stdout and stderr are terminals, and the width a piped status line keeps to.
struct TerminalKind: Sendable {
    var stdoutIsTerminal: Bool
    var stderrIsTerminal: Bool
    var stdinIsTerminal: Bool
    /// `COLUMNS` when set, else 120 (4 views fit).
    var pipedWidth: Int
    /// `MULTIVIEW_STATUS=full`: piped, every view's full entry (precise h:mm:ss.mmm times, whole names, labels)
    /// whatever the width: the form scripts parse (Scripts/soak, Scripts/bench-hls, Scripts/screenshot).
    var fullStatusLine: Bool

    static var current: TerminalKind {
        let columns = ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).flatMap { $0 >= 40 ? $0 : nil }
        return TerminalKind(stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stderrIsTerminal: isatty(STDERR_FILENO) == 1,
                            stdinIsTerminal: isatty(STDIN_FILENO) == 1,
                            pipedWidth: columns ?? 120,
                            fullStatusLine: ProcessInfo.processInfo.environment["MULTIVIEW_STATUS"] == "full")
    }

    /// The terminal's size (80x24 when it does not say).
    static func size() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
