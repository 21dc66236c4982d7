import Foundation
import GStreamer

/// One status report of the stage: every view's state, position and labels, and the forms it is printed in — the
/// full line (in-process reporters, logs), a compact line that fits a width (piped stdout: 4 views in 120 columns),
/// and one line per view (a terminal, redrawn in place by the CLI). A failure's cause is not in it: it is printed
/// once as a line of its own when it happens.
///
/// Pure value (`StageStatusTests` runs in milliseconds).
public struct StageStatus: Sendable, Equatable {
    public enum State: Sendable, Hashable {
        case opening
        case playing, paused, buffering, stopped
        /// Failed for good.
        case failed
        /// Failed, and the observer reloads the view when its server is back (an HLS outage).
        case retrying
        case ended

        public var word: String {
            switch self {
            case .opening: return "opening"
            case .playing: return "PLAYING"
            case .paused: return "PAUSED"
            case .buffering: return "BUFFERING"
            case .stopped: return "STOPPED"
            case .failed: return "FAILED"
            case .retrying: return "RETRYING"
            case .ended: return "ENDED"
            }
        }
    }

    public struct View: Sendable, Equatable {
        public var number: Int
        public var name: String
        public var state: State
        /// Why a view asked to play is not playing yet ("loading", "buffering 40%").
        public var waiting: String?
        public var position: ClockTime?
        public var duration: ClockTime?
        /// Short labels: the observer's rung, the audio level ("muted", "vol 110%").
        public var labels: [String]

        public init(number: Int, name: String, state: State, waiting: String? = nil, position: ClockTime? = nil,
                    duration: ClockTime? = nil, labels: [String] = []) {
            self.number = number; self.name = name; self.state = state; self.waiting = waiting
            self.position = position; self.duration = duration; self.labels = labels
        }
    }

    /// Seconds since the run started.
    public var elapsed: Double
    public var views: [View]

    public init(elapsed: Double, views: [View]) {
        self.elapsed = elapsed; self.views = views
    }

    /// "[  3.0s] ": every form starts with it.
    var prefix: String { String(format: "[%6.1fs] ", elapsed) }

    /// Every view, full names and precise times, one line:
    /// "[  3.0s] 1 angle1-wide.mp4 PLAYING 0:00:03.012/0:00:24.000 | 2 gone.mp4 FAILED".
    public var line: String {
        prefix + views.map { entry($0, name: $0.name, time: { $0.description }, labels: true) }.joined(separator: " | ")
    }

    /// One line of at most `width` columns when it can be: short times (0:03/0:24), then without labels, then with
    /// names shortened (…), then without names. 4 views fit in 120 columns.
    public func compactLine(width: Int) -> String {
        let separator = " | "
        func render(labels: Bool, nameLimit: Int?) -> String {
            prefix + views.map { view in
                entry(view, name: nameLimit.map { Self.shorten(view.name, to: $0) } ?? view.name,
                      time: Self.shortTime, labels: labels)
            }.joined(separator: separator)
        }
        for labels in [true, false] {
            let line = render(labels: labels, nameLimit: nil)
            if line.count <= width { return line }
        }
        // Names shortened to what is left per view (a name costs a space too); at least 4 characters, else none.
        let bare = render(labels: false, nameLimit: 0)
        let spare = (width - bare.count) / max(views.count, 1) - 1
        if spare >= 4 { return render(labels: false, nameLimit: spare) }
        return bare.count <= width ? bare : Self.clip(summary, to: width)
    }

    /// Many views: the views grouped by state, with number ranges and the span of their positions:
    /// "[ 12.0s] 20 views: PLAYING 1-6,8-18 0:03-0:04/0:24 | FAILED 7 | RETRYING 19-20".
    var summary: String {
        var order: [State] = []
        var groups: [State: [View]] = [:]
        for view in views {
            if groups[view.state] == nil { order.append(view.state) }
            groups[view.state, default: []].append(view)
        }
        let parts = order.map { state -> String in
            let members = groups[state] ?? []
            var text = "\(state.word) " + Self.ranges(members.map(\.number))
            let positions = members.compactMap(\.position)
            if let low = positions.min(), let high = positions.max() {
                let (a, b) = (Self.shortTime(low), Self.shortTime(high))
                text += " " + (a == b ? a : "\(a)-\(b)") + (members.compactMap(\.duration).max().map { "/" + Self.shortTime($0) } ?? "")
            }
            return text
        }
        return prefix + "\(views.count) views: " + parts.joined(separator: " | ")
    }

    /// [1, 2, 3, 5, 7, 8] → "1-3,5,7-8".
    static func ranges(_ numbers: [Int]) -> String {
        var parts: [String] = []
        var index = 0
        let sorted = numbers.sorted()
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count, sorted[end + 1] == sorted[end] + 1 { end += 1 }
            parts.append(end == index ? "\(sorted[index])" : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return parts.joined(separator: ",")
    }

    /// One line per view (each at most `width` columns), under a line with the elapsed time: the form a terminal
    /// shows and redraws in place.
    public func lines(width: Int) -> [String] {
        let nameWidth = min(views.map(\.name.count).max() ?? 0, max(width / 3, 8))
        let header = prefix + "\(views.count) view\(views.count == 1 ? "" : "s")"
        return [Self.clip(header, to: width)] + views.map { view in
            let name = Self.shorten(view.name, to: nameWidth).padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            let number = String(view.number).leftPadded(to: String(views.count).count)
            let state = view.state.word.padding(toLength: 9, withPad: " ", startingAt: 0)
            var text = "\(number) \(name) \(state)"
            if let waiting = view.waiting { text += " [\(waiting)]" }
            if let position = view.position { text += " " + Self.shortTime(position) + (view.duration.map { "/" + Self.shortTime($0) } ?? "") }
            for label in view.labels { text += " [\(label)]" }
            while text.hasSuffix(" ") { text.removeLast() }
            return Self.clip(text, to: width)
        }
    }

    private func entry(_ view: View, name: String, time: (ClockTime) -> String, labels: Bool) -> String {
        var text = "\(view.number)" + (name.isEmpty ? "" : " \(name)") + " \(view.state.word)"
        if let waiting = view.waiting { text += " [\(waiting)]" }
        if let position = view.position {
            text += " " + time(position)
            if let duration = view.duration { text += "/" + time(duration) }
        }
        if labels { for label in view.labels { text += " [\(label)]" } }
        return text
    }

    /// 0:03, 1:02:03: whole seconds (the status refreshes every second).
    static func shortTime(_ time: ClockTime) -> String {
        let total = Int(time.nanoseconds / 1_000_000_000)
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    /// "angle1-wide.mp4" to 8 → "angle1-…"; 0 → "".
    static func shorten(_ name: String, to limit: Int) -> String {
        guard limit > 0 else { return "" }
        guard name.count > limit else { return name }
        return String(name.prefix(max(limit - 1, 1))) + "…"
    }

    static func clip(_ text: String, to width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(width - 1, 1))) + "…"
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
