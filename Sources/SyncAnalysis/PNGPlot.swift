import Foundation

/// One series of skew samples on the plot, with its own time origin (runs recorded on different clocks still
/// line up by time since their first command).
public struct PlotSeries: Sendable {
    public var label: String
    public var samples: [SkewSample]
    /// Clock time plotted as x = 0, ns.
    public var originNs: UInt64
    public var color: RGB

    public init(label: String, samples: [SkewSample], originNs: UInt64, color: RGB) {
        self.label = label; self.samples = samples; self.originNs = originNs; self.color = color
    }

    /// A run's samples, labelled with its mode, origin at its first command (or first sample without phases).
    public init(result: SyncAnalysisResult, phases: [PhaseRecord], color: RGB? = nil) {
        self.init(label: result.summary.mode, samples: result.samples,
                  originNs: PNGPlot.origin(phases: phases, samples: result.samples),
                  color: color ?? PNGPlot.color(forMode: result.summary.mode))
    }
}

/// Where things go on the plot. The plot area spans x in `left...right` and y in `top...bottom` (pixels, y down);
/// the axes are drawn just outside it (x axis at `bottom + 1`, y axis at `left - 1`).
public struct PlotLayout: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var left: Int
    public var right: Int
    public var top: Int
    public var bottom: Int
    /// Seconds at the right edge (x = 0 s at the left edge).
    public var xMaxS: Double
    /// Skew at the top edge, ms (0 ms at the bottom edge); samples above are clipped and marked.
    public var yMaxMs: Double

    /// Pixel column of a time since the origin, s (not clamped).
    public func x(seconds: Double) -> Int {
        left + Int((seconds / xMaxS * Double(right - left)).rounded())
    }

    /// Pixel row of a skew, ms, clamped to the plot area (a clipped value maps to `top`).
    public func y(ms: Double) -> Int {
        let fraction = min(max(ms / yMaxMs, 0), 1)
        return bottom - Int((fraction * Double(bottom - top)).rounded())
    }
}

/// Draws skew samples as a scatter plot into an `RGBImage` (pure; SyncBench writes it as `skew.png`).
///
/// x = clock time since the first command (s), y = skew (ms) on a fixed scale or an automatic one (which clips
/// outliers: samples above the top are drawn as dark-outlined triangles on the top edge, and counted in the
/// legend). One 3×3 dot per sample; phase
/// boundaries as vertical lines over alternating light background bands, each band labelled with its phase
/// index; axes with tick marks and labels ("skew ms", "s"); a legend with each series' label (and clipped count).
/// The first series is drawn last, on top; phase bands come from `phases` (the first series' run).
public enum PNGPlot {
    public static let defaultWidth = 1000
    public static let defaultHeight = 400

    public static let background = RGB.white
    /// Background of even- and odd-indexed phase bands.
    public static let bandColors = (even: RGB(246, 246, 246), odd: RGB(226, 234, 246))
    public static let coordinatedColor = RGB(31, 100, 180)
    public static let baselineColor = RGB(225, 90, 20)
    static let axisColor = RGB(40, 40, 40)
    static let boundaryColor = RGB(150, 150, 150)
    static let gridColor = RGB(200, 200, 200)
    static let textColor = RGB(30, 30, 30)
    static let clippedOutline = RGB(120, 0, 0)

    /// Default colour of a run's series: blue for "coordinated", orange for "baseline" (and anything else).
    public static func color(forMode mode: String) -> RGB {
        mode == "coordinated" ? coordinatedColor : baselineColor
    }

    /// Time origin of a run: its first command's clock time, else its first sample's, else 0.
    public static func origin(phases: [PhaseRecord], samples: [SkewSample]) -> UInt64 {
        phases.map(\.commandClockNs).min() ?? samples.map(\.clockNs).min() ?? 0
    }

    /// Seconds from `origin` to `clock` (negative before it).
    static func seconds(_ clock: UInt64, since origin: UInt64) -> Double {
        clock >= origin ? Double(clock - origin) / 1e9 : -Double(origin - clock) / 1e9
    }

    /// The layout `render` uses. `yMaxMs` fixes the y scale; `nil` picks one: a round value above the largest
    /// sample, unless that sample is an outlier (above 3 × the p99 of all series), then a round value above
    /// 1.25 × the p99 (at least 0.1 ms).
    public static func layout(series: [PlotSeries], phases: [PhaseRecord], width: Int = defaultWidth,
                              height: Int = defaultHeight, yMaxMs: Double? = nil) -> PlotLayout {
        let origin = series.first?.originNs ?? origin(phases: phases, samples: [])
        var xMax = 1.0
        for phase in phases {
            xMax = max(xMax, seconds(max(phase.endClockNs, phase.commandClockNs), since: origin))
        }
        for s in series {
            for sample in s.samples { xMax = max(xMax, seconds(sample.clockNs, since: s.originNs)) }
        }
        let xStep = niceStep(xMax / 10)
        xMax = (xMax / xStep).rounded(.up) * xStep

        var yMax: Double
        if let fixed = yMaxMs, fixed.isFinite, fixed > 0 {
            yMax = fixed
        } else {
            let skews = series.flatMap { $0.samples.map { Double($0.skewNs) / 1e6 } }.sorted()
            let largest = skews.last ?? 0
            let p99 = SkewStatistics.nearestRank(skews, percent: 99) ?? 0
            let wanted = largest > 3 * p99 && p99 > 0 ? 1.25 * p99 : largest * 1.05
            yMax = niceCeil(max(wanted, 0.1))
        }
        return PlotLayout(width: width, height: height, left: 78, right: width - 22, top: 34, bottom: height - 52,
                          xMaxS: xMax, yMaxMs: yMax)
    }

    /// Renders the plot.
    public static func render(series: [PlotSeries], phases: [PhaseRecord], width: Int = defaultWidth,
                              height: Int = defaultHeight, yMaxMs: Double? = nil) -> RGBImage {
        let layout = layout(series: series, phases: phases, width: width, height: height, yMaxMs: yMaxMs)
        let origin = series.first?.originNs ?? origin(phases: phases, samples: [])
        var image = RGBImage(width: width, height: height, background: background)
        let (l, r, t, b) = (layout.left, layout.right, layout.top, layout.bottom)

        // Phase bands, boundaries and indices.
        let ordered = phases.sorted { ($0.commandClockNs, $0.index) < ($1.commandClockNs, $1.index) }
        for phase in ordered {
            let x0 = max(l, layout.x(seconds: seconds(phase.commandClockNs, since: origin)))
            let x1 = min(r, layout.x(seconds: seconds(max(phase.endClockNs, phase.commandClockNs), since: origin)))
            guard x0 <= r, x1 >= l else { continue }
            image.fill(x0: x0, y0: t, x1: x1 + 1, y1: b + 1, phase.index % 2 == 0 ? bandColors.even : bandColors.odd)
        }
        // Dotted horizontal grid at the y ticks.
        let yStep = niceStep(layout.yMaxMs / 5)
        let yTicks = ticks(upTo: layout.yMaxMs, step: yStep)
        for value in yTicks where value > 0 {
            let y = layout.y(ms: value)
            for x in stride(from: l, through: r, by: 4) { image.set(x, y, gridColor) }
        }
        for phase in ordered {
            let x = layout.x(seconds: seconds(phase.commandClockNs, since: origin))
            guard x >= l, x <= r else { continue }
            image.verticalLine(x: x, from: t, to: b, boundaryColor)
            let x1 = min(r, layout.x(seconds: seconds(max(phase.endClockNs, phase.commandClockNs), since: origin)))
            let label = String(phase.index)
            let bandWidth = x1 - x
            let scale = bandWidth >= BitmapFont.width(of: label, scale: 2) + 6 ? 2 : 1
            if bandWidth >= BitmapFont.width(of: label, scale: scale) + 4 {
                BitmapFont.draw(label, x: x + 3, y: t + 3, scale: scale, color: boundaryColor, into: &image)
            }
        }

        // Samples: later series first, so the first is on top.
        var clipped = [Int](repeating: 0, count: series.count)
        for (n, s) in series.enumerated().reversed() {
            for sample in s.samples {
                let x = layout.x(seconds: seconds(sample.clockNs, since: s.originNs))
                guard x >= l, x <= r else { continue }
                let ms = Double(sample.skewNs) / 1e6
                if ms > layout.yMaxMs {
                    clipped[n] += 1
                    // Upward triangle on the top edge, with a dark outline.
                    for row in 0..<7 {
                        image.horizontalLine(y: t + row, from: x - row, to: x + row, clippedOutline)
                        if row > 0, row < 6 {
                            image.horizontalLine(y: t + row, from: x - row + 1, to: x + row - 1, s.color)
                        }
                    }
                } else {
                    let y = layout.y(ms: ms)
                    image.fill(x0: x - 1, y0: y - 1, x1: x + 2, y1: y + 2, s.color)
                }
            }
        }

        // Axes, ticks, tick labels.
        image.horizontalLine(y: b + 1, from: l - 1, to: r, axisColor)
        image.verticalLine(x: l - 1, from: t, to: b + 1, axisColor)
        for value in yTicks {
            let y = layout.y(ms: value)
            image.horizontalLine(y: y, from: l - 6, to: l - 1, axisColor)
            let text = format(value, step: yStep)
            BitmapFont.draw(text, x: l - 9 - BitmapFont.width(of: text, scale: 2), y: y - 7, scale: 2,
                            color: textColor, into: &image)
        }
        let xStep = niceStep(layout.xMaxS / 10)
        for value in ticks(upTo: layout.xMaxS, step: xStep) {
            let x = layout.x(seconds: value)
            image.verticalLine(x: x, from: b + 1, to: b + 6, axisColor)
            let text = format(value, step: xStep)
            BitmapFont.draw(text, x: x - BitmapFont.width(of: text, scale: 2) / 2, y: b + 10, scale: 2,
                            color: textColor, into: &image)
        }
        let xTitle = "s since first command"
        BitmapFont.draw(xTitle, x: (l + r - BitmapFont.width(of: xTitle, scale: 2)) / 2, y: height - 18, scale: 2,
                        color: textColor, into: &image)
        let yTitle = "skew ms"
        BitmapFont.drawVertical(yTitle, x: 6, y: (t + b + BitmapFont.width(of: yTitle, scale: 2)) / 2, scale: 2,
                                color: textColor, into: &image)

        // Title and legend.
        BitmapFont.draw("frame skew", x: l, y: 10, scale: 2, color: textColor, into: &image)
        var lx = r
        for (n, s) in series.enumerated().reversed() {
            let text = clipped[n] > 0 ? "\(s.label) (\(clipped[n]) clipped ^)" : s.label
            lx -= BitmapFont.width(of: text, scale: 2)
            BitmapFont.draw(text, x: lx, y: 10, scale: 2, color: textColor, into: &image)
            lx -= 16
            image.fill(x0: lx, y0: 12, x1: lx + 10, y1: 22, s.color)
            lx -= 20
        }
        return image
    }

    /// Renders a run's samples (and optionally a second run's, e.g. the baseline) as the plot's pixels.
    public static func image(result: SyncAnalysisResult, phases: [PhaseRecord],
                             comparison: (result: SyncAnalysisResult, phases: [PhaseRecord])? = nil,
                             yMaxMs: Double? = nil) -> RGBImage {
        var series = [PlotSeries(result: result, phases: phases)]
        if let comparison {
            var color = color(forMode: comparison.result.summary.mode)
            if color == series[0].color { color = color == coordinatedColor ? baselineColor : coordinatedColor }
            series.append(PlotSeries(result: comparison.result, phases: comparison.phases, color: color))
        }
        return render(series: series, phases: phases, yMaxMs: yMaxMs)
    }

    /// Smallest 1, 2 or 5 × 10ⁿ at least `value`.
    static func niceStep(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        let magnitude = pow(10, (log10(value)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= value * (1 - 1e-9) { return factor * magnitude }
        return 10 * magnitude
    }

    /// Smallest 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 or 10 × 10ⁿ at least `value`.
    static func niceCeil(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        let magnitude = pow(10, (log10(value)).rounded(.down))
        for factor in [1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10] where factor * magnitude >= value * (1 - 1e-9) {
            return factor * magnitude
        }
        return 10 * magnitude
    }

    static func ticks(upTo maximum: Double, step: Double) -> [Double] {
        let count = Int((maximum / step * (1 + 1e-9)).rounded(.down))
        return (0...max(0, min(count, 1000))).map { Double($0) * step }
    }

    static func format(_ value: Double, step: Double) -> String {
        let decimals = step >= 1 ? 0 : min(6, Int((-log10(step)).rounded(.up)))
        return String(format: "%.\(decimals)f", value)
    }
}
