import ArgumentParser
import Foundation
import SyncAnalysis

/// `multiview sync-log-skew DIR`: the skew between views from what `play --sync-log DIR` recorded, compared as
/// `sync-report` compares them (`WindowedSkew` over `SyncAnalyzer`), in given quiet windows, per block of the run.
struct SyncLogSkew: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-log-skew",
        abstract: "Skew between views from a play --sync-log directory: p50/p99/max per block of the run.",
        discussion: """
        Frames of views on the same item (coordinated views) are compared frame by frame: the spread of their render \
        times on the shared clock (as sync-report measures it). --windows limits the comparison to quiet spans \
        (lines 'START END [VIEW,VIEW…]': wall-clock seconds since 1970, the views listed are left out of that span); \
        without it the whole log is one span, seeks and all.
        """
    )

    @Argument(help: "The --sync-log directory (or its render-times.log).")
    var log: String

    @Option(name: .long, help: "Quiet windows, one per line: START END [VIEW,VIEW…] (wall-clock seconds since 1970).")
    var windows: String?

    @Option(name: .long, help: "Block length in seconds.")
    var block: Double = 300

    @Option(name: .long, help: "Where block 1 starts (wall-clock seconds since 1970; default: the first frame).")
    var start: Double?

    @Option(name: .long, help: "Blocks up to this wall-clock time are listed even when empty.")
    var until: Double?

    @Option(name: .long, help: "Also write the figures as JSON to this file.")
    var json: String?

    func validate() throws {
        guard block.isFinite, block >= 1, block <= 86_400 else { throw ValidationError("--block \(block): allowed 1…86400 s") }
    }

    func run() throws {
        var isDirectory: ObjCBool = false
        let path = FileManager.default.fileExists(atPath: log, isDirectory: &isDirectory) && isDirectory.boolValue
            ? (log as NSString).appendingPathComponent(SyncLog.fileName) : log
        let parsed: SyncLog
        do {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            parsed = try SyncLog.parse(text[...])
        } catch {
            throw ValidationError("\(path): \(error)")
        }
        guard let firstPair = parsed.clockPairs.first else { throw ValidationError("\(path): no clock line (T): an empty log") }
        func clock(_ unixSeconds: Double) throws -> UInt64 {
            guard unixSeconds.isFinite, unixSeconds > 0,
                  let ns = parsed.clockNs(atUnixNs: UInt64(unixSeconds * 1e9)) else {
                throw ValidationError("\(unixSeconds): not a wall-clock time this log covers")
            }
            return ns
        }
        let spans: [WindowedSkew.Window]
        if let windows {
            let text: String
            do { text = try String(contentsOfFile: windows, encoding: .utf8) } catch {
                throw ValidationError("--windows \(windows): \(error.localizedDescription)")
            }
            spans = try Self.parseWindows(text, file: windows).map { w in
                WindowedSkew.Window(startNs: try clock(w.start), endNs: try clock(w.end), excludedViews: w.excluded)
            }
        } else {
            spans = [WindowedSkew.Window(startNs: 0, endNs: .max)]
        }
        let origin = try start.map(clock) ?? parsed.frames.map(\.renderClockNs).min() ?? firstPair.clockNs
        let result = WindowedSkew.analyze(frames: parsed.frames, windows: spans, originNs: origin,
                                          blockNs: UInt64(block * 1e9), untilNs: try until.map(clock))
        print(Self.table(result, block: block, frames: parsed.frames.count))
        if let json {
            do {
                try Self.json(result, block: block, frames: parsed.frames.count).write(to: URL(fileURLWithPath: json))
            } catch {
                throw ValidationError("--json \(json): \(error.localizedDescription)")
            }
        }
    }

    /// `START END [VIEW,VIEW…]` lines (blank lines and `#` comments skipped).
    static func parseWindows(_ text: String, file: String) throws -> [(start: Double, end: Double, excluded: Set<Int>)] {
        var out: [(start: Double, end: Double, excluded: Set<Int>)] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(separator: " ")
            if fields.isEmpty { continue }
            let views = fields.count == 3 ? fields[2].split(separator: ",").map { Int($0) } : []
            guard fields.count <= 3, fields.count >= 2, let start = Double(fields[0]), let end = Double(fields[1]),
                  !views.contains(nil) else {
                throw ValidationError("\(file):\(number + 1): expected 'START END [VIEW,VIEW…]', found '\(raw)'")
            }
            out.append((start, end, Set(views.compactMap { $0 })))
        }
        return out
    }

    static func table(_ result: WindowedSkew.Result, block: Double, frames: Int) -> String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "-" }
        func row(_ cells: [String]) -> String {
            zip(cells, [5, 8, 5, 7, 8, 8, 8]).map { String(repeating: " ", count: max(0, $1 - $0.count)) + $0 }
                .joined(separator: " ")
        }
        var lines = [row(["block", "from s", "views", "frames", "p50 ms", "p99 ms", "max ms"])]
        for b in result.blocks {
            let s = b.statistics
            lines.append(row(["\(b.index + 1)", String(format: "%.0f", Double(b.index) * block), "\(b.views)",
                              "\(s.frames)", ms(s.p50Ms), ms(s.p99Ms), ms(s.maxMs)]))
        }
        let o = result.overall
        lines.append(row(["all", "", "", "\(o.frames)", ms(o.p50Ms), ms(o.p99Ms), ms(o.maxMs)]))
        lines.append("\(frames) frames logged, \(result.framesInWindows) inside the windows, \(o.frames) frame groups compared")
        return lines.joined(separator: "\n")
    }

    static func json(_ result: WindowedSkew.Result, block: Double, frames: Int) throws -> Data {
        func figures(_ s: SkewStatistics) -> [String: Any] {
            func value(_ ms: Double?) -> Any { ms.map { $0 as Any } ?? NSNull() }
            return ["frames": s.frames, "p50_ms": value(s.p50Ms), "p99_ms": value(s.p99Ms), "max_ms": value(s.maxMs)]
        }
        let blocks: [[String: Any]] = result.blocks.map { b in
            figures(b.statistics).merging(["block": b.index + 1, "from_s": Double(b.index) * block, "views": b.views]) { a, _ in a }
        }
        let object: [String: Any] = ["blocks": blocks, "overall": figures(result.overall), "block_s": block,
                                     "frames_logged": frames, "frames_in_windows": result.framesInWindows]
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
    }
}
