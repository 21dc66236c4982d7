import Foundation
import GStreamer
import SyncAnalysis

/// Writes a run's report files (`summary.json`, `frames.json`, `skew.png`; see `SyncReportWriter`) with the plot
/// encoded as PNG by GStreamer's pngenc (`PNGEncoding`).
///
/// Owner: the serial `queue`. File writes and the encoding block, so the whole write runs there, never on Swift's
/// cooperative threads; the enum holds no state.
public enum SyncReportFiles {
    private static let queue = DispatchQueue(label: "multiview.sync-report-files")

    public static func write(result: SyncAnalysisResult, frames: [FrameRecord], phases: [PhaseRecord],
                             to directory: URL, fileStem: String = "",
                             comparison: (result: SyncAnalysisResult, phases: [PhaseRecord])? = nil) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                continuation.resume(with: Result {
                    try SyncReportWriter.write(result: result, frames: frames, phases: phases, to: directory,
                                               fileStem: fileStem, comparison: comparison) { image in
                        try PNGEncoding.encodeBlocking(rgb: image.pixels, width: image.width, height: image.height)
                    }
                })
            }
        }
    }
}
