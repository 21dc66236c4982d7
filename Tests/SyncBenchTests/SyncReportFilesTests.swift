import Foundation
import SyncAnalysis
import SyncBench
import TestSupport
import XCTest

/// The report files of a (synthetic) run as the CLI's sync-report writes them: skew.png is the plot's pixels,
/// encoded by GStreamer, read back by an independent decoder.
final class SyncReportFilesTests: XCTestCase {
    private static let start: UInt64 = 1_000_000_000_000

    /// Two views, 60 frames at 30 fps, view 2 `skewNs` behind, on a clock starting at `start`.
    private func run(mode: String, skewNs: UInt64) -> (frames: [FrameRecord], phases: [PhaseRecord], result: SyncAnalysisResult) {
        let phases = [PhaseRecord(index: 0, name: "play", commandClockNs: Self.start,
                                  endClockNs: Self.start + 2_000_000_000)]
        var frames: [FrameRecord] = []
        for view in 1...2 {
            for index in 0..<60 {
                let media = UInt64(index) * 1_000_000_000 / 30
                frames.append(FrameRecord(view: view, mediaTimeNs: media,
                                          renderClockNs: Self.start + media + (view == 2 ? skewNs : 0),
                                          rate: 1, phase: 0, item: "a"))
            }
        }
        return (frames, phases, SyncAnalyzer.analyze(frames: frames, phases: phases, mode: mode))
    }

    func testSkewPNGIsThePlotPixelForPixel() async throws {
        let scratch = try TemporaryDirectory(prefix: "sync-report-files")
        let coordinated = run(mode: "coordinated", skewNs: 300_000)
        let baseline = run(mode: "baseline", skewNs: 6_000_000)
        try await SyncReportFiles.write(result: baseline.result, frames: baseline.frames, phases: baseline.phases,
                                        to: scratch.url, fileStem: "baseline")
        try await SyncReportFiles.write(result: coordinated.result, frames: coordinated.frames,
                                        phases: coordinated.phases, to: scratch.url,
                                        comparison: (baseline.result, baseline.phases))
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        XCTAssertEqual(names, ["frames-baseline.json", "frames.json", "skew-baseline.png", "skew.png",
                               "summary-baseline.json", "summary.json"])

        let png = try decodePNG(atPath: scratch.path("skew.png"))
        let plot = PNGPlot.image(result: coordinated.result, phases: coordinated.phases,
                                 comparison: (baseline.result, baseline.phases))
        XCTAssertEqual(png.width, PNGPlot.defaultWidth)
        XCTAssertEqual(png.height, PNGPlot.defaultHeight)
        XCTAssertEqual(png.rgb, plot.pixels, "skew.png holds exactly the plot's pixels")
        // Not a blank picture: both series' colours are in it.
        let colours = Set(stride(from: 0, to: png.rgb.count, by: 3).map { RGB(png.rgb[$0], png.rgb[$0 + 1], png.rgb[$0 + 2]) })
        XCTAssertTrue(colours.contains(PNGPlot.coordinatedColor))
        XCTAssertTrue(colours.contains(PNGPlot.baselineColor))

        let baselinePNG = try decodePNG(atPath: scratch.path("skew-baseline.png"))
        XCTAssertEqual(baselinePNG.rgb, PNGPlot.image(result: baseline.result, phases: baseline.phases).pixels)
    }
}
