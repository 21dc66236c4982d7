import Foundation

/// The plain-text table `multiview sync-report` prints.
///
/// One row per phase (matched by index across summaries, named from the first summary that has it), then an
/// "all" row with the whole-run figures. For each summary (one, or e.g. coordinated and baseline side by side) the
/// columns are views, frames, p50/p99/max skew (ms, 3 decimals) and time to aligned (ms, 1 decimal; "-" for
/// none, as for every missing figure). A header line names each summary's mode above its columns.
public enum SummaryTable {
    static let nameWidth = 24
    static let columns: [(title: String, width: Int)] = [
        ("views", 5), ("frames", 7), ("p50 ms", 9), ("p99 ms", 9), ("max ms", 9), ("aligned ms", 11),
    ]
    static let separator = " | "

    public static func render(_ summaries: [SyncSummary]) -> String {
        let blockWidth = columns.reduce(0) { $0 + $1.width } + columns.count - 1
        var lines: [String] = []

        var header = pad("", nameWidth)
        for summary in summaries { header += separator + center(summary.mode, blockWidth) }
        lines.append(header)
        var titles = pad("phase", nameWidth)
        for _ in summaries { titles += separator + columns.map { padLeft($0.title, $0.width) }.joined(separator: " ") }
        lines.append(titles)
        lines.append(String(repeating: "-", count: titles.count))

        var indices: [Int] = []
        var names: [Int: String] = [:]
        for summary in summaries {
            for phase in summary.phases where names[phase.index] == nil {
                indices.append(phase.index); names[phase.index] = phase.name
            }
        }
        for index in indices.sorted() {
            var line = pad(truncate("\(index) \(names[index] ?? "")", nameWidth), nameWidth)
            for summary in summaries {
                let phase = summary.phases.first { $0.index == index }
                line += separator + cells(views: phase?.views, frames: phase?.frames, p50: phase?.p50SkewMs,
                                          p99: phase?.p99SkewMs, max: phase?.maxSkewMs,
                                          aligned: phase?.timeToAlignedMs)
            }
            lines.append(line)
        }
        lines.append(String(repeating: "-", count: titles.count))
        var all = pad("all", nameWidth)
        for summary in summaries {
            all += separator + cells(views: summary.views, frames: summary.frames, p50: summary.p50SkewMs,
                                     p99: summary.p99SkewMs, max: summary.maxSkewMs, aligned: nil)
        }
        lines.append(all)
        return lines.map { trimTrailing($0) }.joined(separator: "\n") + "\n"
    }

    static func cells(views: Int?, frames: Int?, p50: Double?, p99: Double?, max: Double?, aligned: Double?)
        -> String
    {
        let values = [
            views.map(String.init) ?? "-", frames.map(String.init) ?? "-",
            ms(p50, 3), ms(p99, 3), ms(max, 3), ms(aligned, 1),
        ]
        return zip(values, columns).map { padLeft($0, $1.width) }.joined(separator: " ")
    }

    static func ms(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "-" }
        return String(format: "%.\(decimals)f", value)
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    static func padLeft(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }

    static func center(_ s: String, _ width: Int) -> String {
        guard s.count < width else { return s }
        let leftPad = (width - s.count) / 2
        return pad(String(repeating: " ", count: leftPad) + s, width)
    }

    static func truncate(_ s: String, _ width: Int) -> String {
        s.count <= width ? s : String(s.prefix(width - 1)) + "~"
    }

    static func trimTrailing(_ s: String) -> String {
        var s = s
        while s.last == " " { s.removeLast() }
        return s
    }
}
