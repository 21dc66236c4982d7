import Foundation

/// The content of `frames.json`: every frame record and phase of one run, as recorded.
public struct SyncFrameDump: Codable, Sendable, Equatable {
    public var mode: String
    public var fps: Double
    public var phases: [PhaseRecord]
    public var frames: [FrameRecord]

    public init(mode: String, fps: Double, phases: [PhaseRecord], frames: [FrameRecord]) {
        self.mode = mode; self.fps = fps; self.phases = phases; self.frames = frames
    }
}

/// Writes a run's report files into a directory (created if needed):
/// - `summary.json`: the `SyncSummary`, pretty-printed with sorted keys;
/// - `frames.json`: a `SyncFrameDump` (all frame records and phases; compact, sorted keys);
/// - `skew.png`: the `PNGPlot` of the samples, as the file `encodePlot` makes of its pixels (SyncBench passes
///   GStreamer's pngenc; this module stays pure).
///
/// With a non-empty `fileStem` (e.g. "baseline", for a second run in the same directory) the names become
/// `summary-<stem>.json`, `frames-<stem>.json` and `skew-<stem>.png`.
public enum SyncReportWriter {
    /// The file names used for a stem: (summary, frames, plot).
    public static func fileNames(fileStem: String = "") -> (summary: String, frames: String, plot: String) {
        let suffix = fileStem.isEmpty ? "" : "-\(fileStem)"
        return ("summary\(suffix).json", "frames\(suffix).json", "skew\(suffix).png")
    }

    /// Writes the three files. `comparison`, when given, is drawn as a second series on the plot (e.g. the
    /// baseline run under the coordinated one); it changes nothing else. `encodePlot` turns the plot's pixels into
    /// the PNG file's bytes.
    public static func write(result: SyncAnalysisResult, frames: [FrameRecord], phases: [PhaseRecord],
                             to directory: URL, fileStem: String = "",
                             comparison: (result: SyncAnalysisResult, phases: [PhaseRecord])? = nil,
                             encodePlot: (RGBImage) throws -> Data) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let names = fileNames(fileStem: fileStem)

        try summaryJSON(result.summary).write(to: directory.appendingPathComponent(names.summary), options: .atomic)

        let dumpEncoder = JSONEncoder()
        dumpEncoder.outputFormatting = [.sortedKeys]
        let dump = SyncFrameDump(mode: result.summary.mode, fps: result.fps, phases: phases, frames: frames)
        try dumpEncoder.encode(dump).write(to: directory.appendingPathComponent(names.frames), options: .atomic)

        try encodePlot(PNGPlot.image(result: result, phases: phases, comparison: comparison))
            .write(to: directory.appendingPathComponent(names.plot), options: .atomic)
    }

    /// `summary.json`'s bytes: pretty-printed, sorted keys, trailing newline.
    public static func summaryJSON(_ summary: SyncSummary) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(summary)
        data.append(0x0A)
        return data
    }
}
