import XCTest
@testable import SyncAnalysis

/// The skew plot's pixels (pure: the PNG file itself is SyncBench's, encoded by GStreamer; see SyncBenchTests).
final class SkewPlotTests: XCTestCase {
    func testPlotHasDotsWhereSamplesAre() throws {
        let phases = [
            phase(0, "play", from: baseClockNs, to: baseClockNs + 2_000_000_000),
            phase(1, "stall 2", from: baseClockNs + 2_000_000_000, to: baseClockNs + 6_000_000_000),
        ]
        // Skew 1 ms in phase 0, 4 ms in phase 1, and one 500 ms outlier to clip.
        var frames = twoViews(indices: Array(0..<60), offsetNs: 1_000_000, phase: 0)
        let start1 = baseClockNs + 2_000_000_000
        frames += renders(view: 1, indices: Array(60..<180), startClockNs: start1, phase: 1)
        frames += renders(view: 2, indices: Array(60..<179), offsetNs: 4_000_000, startClockNs: start1, phase: 1)
        frames += renders(view: 2, indices: [179], offsetNs: 500_000_000, startClockNs: start1, phase: 1,
                          startIndex: 60)
        let result = SyncAnalyzer.analyze(frames: frames, phases: phases, mode: "coordinated")
        XCTAssertEqual(result.summary.frames, 180)

        let plot = PNGPlot.image(result: result, phases: phases)
        XCTAssertEqual(plot.width, PNGPlot.defaultWidth)
        XCTAssertEqual(plot.height, PNGPlot.defaultHeight)

        let series = PlotSeries(result: result, phases: phases)
        XCTAssertEqual(series.originNs, baseClockNs)
        XCTAssertEqual(series.color, PNGPlot.coordinatedColor)
        let layout = PNGPlot.layout(series: [series], phases: phases)
        XCTAssertLessThan(layout.yMaxMs, 500)        // the outlier is clipped
        XCTAssertGreaterThanOrEqual(layout.yMaxMs, 4)
        XCTAssertGreaterThanOrEqual(layout.xMaxS, 6)

        // A dot at the 4 ms sample of frame 120 (4 s after the first command) …
        let x = layout.x(seconds: 4), y = layout.y(ms: 4)
        XCTAssertEqual(plot[x, y], PNGPlot.coordinatedColor)
        // … none between the 1 ms and 4 ms rows there: band background (phase 1 is odd).
        XCTAssertEqual(plot[x, layout.y(ms: 2.5)], PNGPlot.bandColors.odd)
        XCTAssertEqual(plot[layout.x(seconds: 1), layout.y(ms: 2.5)], PNGPlot.bandColors.even)
        // The phase 0 dots at 1 ms.
        XCTAssertEqual(plot[layout.x(seconds: 1), layout.y(ms: 1)], PNGPlot.coordinatedColor)
        // The clipped outlier is marked on the top edge, near x = 6 s.
        let outlierX = layout.x(seconds: PNGPlot.seconds(result.samples.last!.clockNs, since: baseClockNs))
        XCTAssertEqual(plot[outlierX, layout.top], PNGPlot.clippedOutline)
        XCTAssertEqual(plot[outlierX, layout.top + 3], PNGPlot.coordinatedColor)
        XCTAssertEqual(plot[outlierX - 3, layout.top + 3], PNGPlot.clippedOutline)
        XCTAssertEqual(plot[outlierX, layout.top + 8], PNGPlot.bandColors.odd)
        // The phase boundary at 2 s is a vertical line; the axes are drawn.
        XCTAssertEqual(plot[layout.x(seconds: 2), layout.y(ms: 2.5)], PNGPlot.boundaryColor)
        XCTAssertEqual(plot[layout.left - 1, (layout.top + layout.bottom) / 2], PNGPlot.axisColor)
        XCTAssertEqual(plot[(layout.left + layout.right) / 2 + 1, layout.bottom + 1], PNGPlot.axisColor)
        // Outside the plot area (the margin's corner) is plain background.
        XCTAssertEqual(plot[plot.width - 1, plot.height - 1], PNGPlot.background)
    }

    func testComparisonSeriesIsDrawnInItsOwnColour() throws {
        let phases = [phase(0, "play", from: baseClockNs, to: baseClockNs + 2_000_000_000)]
        let coordinated = SyncAnalyzer.analyze(
            frames: twoViews(indices: Array(0..<60), offsetNs: 200_000),
            phases: phases, mode: "coordinated")
        // The baseline ran on another clock: its own origin lines it up.
        let otherClock = baseClockNs * 3
        let basePhases = [phase(0, "play", from: otherClock, to: otherClock + 2_000_000_000)]
        let baseline = SyncAnalyzer.analyze(
            frames: twoViews(indices: Array(0..<60), offsetNs: 8_000_000, startClockNs: otherClock),
            phases: basePhases, mode: "baseline")
        let plot = PNGPlot.image(result: coordinated, phases: phases, comparison: (baseline, basePhases), yMaxMs: 10)
        let layout = PNGPlot.layout(series: [PlotSeries(result: coordinated, phases: phases),
                                             PlotSeries(result: baseline, phases: basePhases)],
                                    phases: phases, yMaxMs: 10)
        XCTAssertEqual(layout.yMaxMs, 10)
        XCTAssertEqual(plot[layout.x(seconds: 1), layout.y(ms: 8)], PNGPlot.baselineColor)
        XCTAssertEqual(plot[layout.x(seconds: 1), layout.y(ms: 0.2)], PNGPlot.coordinatedColor)
    }
}
