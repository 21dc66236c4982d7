import Foundation

/// What `help` (stdin) and the window's `?` / `h` keys print: the keys and commands in a short table, one row per
/// line. Pure text (`StageHelpTests` checks every command it names parses).
public enum StageHelp {
    /// One row: what to type or press, and what it does.
    public struct Row: Sendable, Equatable {
        public let input: String
        public let action: String
    }

    /// Window keys.
    public static let keys: [Row] = [
        Row(input: "space", action: "play / pause every view"),
        Row(input: "← / →", action: "seek -10 s / +10 s"),
        Row(input: "f", action: "fullscreen on / off (resizing the window lays the tiles out again)"),
        Row(input: "m", action: "mute / unmute every view"),
        Row(input: "/ and *", action: "volume -10 / +10 (every view)"),
        Row(input: "1 … 9", action: "cycle that view's priority on a shared link"),
        Row(input: "a N / v N", action: "prefer view N for audio routes / the external display (0 clears)"),
        Row(input: "? or h", action: "this help (printed on the terminal)"),
        Row(input: "q or Esc", action: "quit"),
    ]

    /// Commands typed on stdin (each line one command).
    public static let commands: [Row] = [
        Row(input: "p", action: "play / pause every view (also: play, pause)"),
        Row(input: "seek 1:23", action: "go to 1:23 (also 42.5, 1:02:03)"),
        Row(input: "seek +5, seek -5", action: "seek by seconds (also +10, -1:30)"),
        Row(input: "rate 2", action: "playback rate 0.125 … 8"),
        Row(input: "volume 80", action: "every view's volume, percent 0 … 150"),
        Row(input: "volume N 50", action: "view N's volume (volume +10 / -10: every view by steps)"),
        Row(input: "mute, mute N", action: "mute / unmute every view, or view N"),
        Row(input: "lang N audio fr", action: "view N's audio language"),
        Row(input: "subs N en|off", action: "view N's subtitles"),
        Row(input: "r N", action: "coordinated: replay view N's last seconds at 2x and rejoin"),
        Row(input: "add URI", action: "add a view (a folder, a playlist: one per file); coordinated: joins in sync"),
        Row(input: "priority N high", action: "HLS: view N's priority, low|default|high"),
        Row(input: "audio N, external N", action: "routing: prefer view N (none clears)"),
        Row(input: "ff N, rew N", action: "HLS I-frames: view N at 8x / -8x (a transport command resumes)"),
        Row(input: "preview N 12 f.png", action: "HLS I-frames: view N's picture at 12 s to f.png"),
        Row(input: "s", action: "status line now"),
        Row(input: "help", action: "this help (also ?, h)"),
        Row(input: "q", action: "quit"),
    ]

    /// The table as printed: two sections, the inputs in one column.
    public static var text: String {
        let width = (keys + commands).map(\.input.count).max() ?? 0
        func lines(_ rows: [Row]) -> [String] {
            rows.map { "  " + $0.input.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.action }
        }
        return (["keys in the window:"] + lines(keys) + ["commands on stdin:"] + lines(commands))
            .joined(separator: "\n")
    }
}
