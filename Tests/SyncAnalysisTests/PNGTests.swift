import XCTest
@testable import SyncAnalysis

/// A PNG reader written independently of `PNGEncoder`: bitwise CRC-32, plain Adler-32, stored-block inflate.
struct DecodedPNG {
    var width = 0, height = 0
    var chunkTypes: [String] = []
    var storedBlocks = 0
    var rows: [[UInt8]] = []   // RGB bytes per row, filter byte removed

    func pixel(_ x: Int, _ y: Int) -> RGB { RGB(rows[y][3 * x], rows[y][3 * x + 1], rows[y][3 * x + 2]) }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func bitwiseCRC32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt64 = 1, b: UInt64 = 0
        for byte in bytes { a = (a + UInt64(byte)) % 65_521; b = (b + a) % 65_521 }
        return UInt32(b << 16 | a)
    }

    static func be32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw Failure(description: "no PNG signature")
        }
        var at = 8
        var idat: [UInt8] = []
        while at < bytes.count {
            guard at + 12 <= bytes.count else { throw Failure(description: "truncated chunk header") }
            let length = Int(Self.be32(bytes, at))
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            guard at + 12 + length <= bytes.count else { throw Failure(description: "truncated \(type)") }
            let stored = Self.be32(bytes, at + 8 + length)
            guard Self.bitwiseCRC32(bytes[(at + 4)..<(at + 8 + length)]) == stored else {
                throw Failure(description: "bad CRC in \(type)")
            }
            let body = Array(bytes[(at + 8)..<(at + 8 + length)])
            chunkTypes.append(type)
            if type == "IHDR" {
                width = Int(Self.be32(body, 0)); height = Int(Self.be32(body, 4))
                guard Array(body[8...]) == [8, 2, 0, 0, 0] else { throw Failure(description: "not 8-bit RGB") }
            } else if type == "IDAT" {
                idat += body
            }
            at += 12 + length
        }

        // zlib: header, stored blocks, Adler-32.
        guard idat.count >= 6, idat[0] & 0x0F == 8, (Int(idat[0]) << 8 | Int(idat[1])) % 31 == 0,
              idat[1] & 0x20 == 0 else { throw Failure(description: "bad zlib header") }
        var inflated: [UInt8] = []
        var p = 2
        var final = false
        while !final {
            guard p + 5 <= idat.count else { throw Failure(description: "truncated deflate block") }
            final = idat[p] & 1 == 1
            guard (idat[p] >> 1) & 3 == 0 else { throw Failure(description: "not a stored block") }
            let len = Int(idat[p + 1]) | Int(idat[p + 2]) << 8
            let nlen = Int(idat[p + 3]) | Int(idat[p + 4]) << 8
            guard len ^ nlen == 0xFFFF else { throw Failure(description: "LEN/NLEN mismatch") }
            guard p + 5 + len <= idat.count else { throw Failure(description: "truncated stored data") }
            inflated += idat[(p + 5)..<(p + 5 + len)]
            p += 5 + len
            storedBlocks += 1
        }
        guard p + 4 == idat.count else { throw Failure(description: "bytes after the deflate stream") }
        guard Self.be32(idat, p) == Self.adler32(inflated) else { throw Failure(description: "bad Adler-32") }
        guard inflated.count == height * (1 + 3 * width) else {
            throw Failure(description: "inflated \(inflated.count) bytes, expected \(height * (1 + 3 * width))")
        }
        let stride = 1 + 3 * width
        for y in 0..<height {
            guard inflated[y * stride] == 0 else { throw Failure(description: "row \(y) has filter \(inflated[y * stride])") }
            rows.append(Array(inflated[(y * stride + 1)..<((y + 1) * stride)]))
        }
    }
}

final class PNGTests: XCTestCase {
    func testSmallImageRoundTrips() throws {
        var image = RGBImage(width: 3, height: 2, background: RGB(1, 2, 3))
        image[0, 0] = RGB(255, 0, 0)
        image[2, 1] = RGB(0, 0, 255)
        let png = try DecodedPNG(PNGEncoder.encode(image))
        XCTAssertEqual(png.chunkTypes, ["IHDR", "IDAT", "IEND"])
        XCTAssertEqual(png.width, 3)
        XCTAssertEqual(png.height, 2)
        XCTAssertEqual(png.storedBlocks, 1)
        XCTAssertEqual(png.pixel(0, 0), RGB(255, 0, 0))
        XCTAssertEqual(png.pixel(1, 0), RGB(1, 2, 3))
        XCTAssertEqual(png.pixel(2, 1), RGB(0, 0, 255))
    }

    func testChecksumsMatchKnownValues() {
        XCTAssertEqual(PNGEncoder.crc32(Array("123456789".utf8)), 0xCBF4_3926)
        XCTAssertEqual(PNGEncoder.crc32(Array("IEND".utf8)), 0xAE42_6082)
        XCTAssertEqual(PNGEncoder.adler32(Array("Wikipedia".utf8)), 0x11E6_0398)
        let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        XCTAssertEqual(PNGEncoder.adler32(big), DecodedPNG.adler32(big))
    }

    func testStoredBlocksNeverExceed65535Bytes() {
        let data = [UInt8](repeating: 0xAB, count: 65_535 * 2 + 10)
        let stream = PNGEncoder.zlibStored(data)
        XCTAssertEqual(stream.count, 2 + 3 * 5 + data.count + 4)
        XCTAssertEqual(stream[2], 0)                       // first block not final
        XCTAssertEqual(Array(stream[3...4]), [0xFF, 0xFF])  // LEN 65535
        XCTAssertEqual(stream[2 + 5 + 65_535 + 5 + 65_535], 1)   // third block final
    }

    func testWrittenPlotIsAValidPNGWithDotsWhereSamplesAre() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
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

        try SyncReportWriter.write(result: result, frames: frames, phases: phases, to: directory)
        let png = try DecodedPNG(Data(contentsOf: directory.appendingPathComponent("skew.png")))
        XCTAssertEqual(png.chunkTypes.first, "IHDR")
        XCTAssertEqual(png.chunkTypes.last, "IEND")
        XCTAssertEqual(png.width, PNGPlot.defaultWidth)
        XCTAssertEqual(png.height, PNGPlot.defaultHeight)
        XCTAssertGreaterThan(png.storedBlocks, 1)

        let series = PlotSeries(result: result, phases: phases)
        XCTAssertEqual(series.originNs, baseClockNs)
        XCTAssertEqual(series.color, PNGPlot.coordinatedColor)
        let layout = PNGPlot.layout(series: [series], phases: phases)
        XCTAssertLessThan(layout.yMaxMs, 500)        // the outlier is clipped
        XCTAssertGreaterThanOrEqual(layout.yMaxMs, 4)
        XCTAssertGreaterThanOrEqual(layout.xMaxS, 6)

        // A dot at the 4 ms sample of frame 120 (4 s after the first command) …
        let x = layout.x(seconds: 4), y = layout.y(ms: 4)
        XCTAssertEqual(png.pixel(x, y), PNGPlot.coordinatedColor)
        // … none between the 1 ms and 4 ms rows there: band background (phase 1 is odd).
        XCTAssertEqual(png.pixel(x, layout.y(ms: 2.5)), PNGPlot.bandColors.odd)
        XCTAssertEqual(png.pixel(layout.x(seconds: 1), layout.y(ms: 2.5)), PNGPlot.bandColors.even)
        // The phase 0 dots at 1 ms.
        XCTAssertEqual(png.pixel(layout.x(seconds: 1), layout.y(ms: 1)), PNGPlot.coordinatedColor)
        // The clipped outlier is marked on the top edge, near x = 6 s.
        let outlierX = layout.x(seconds: PNGPlot.seconds(result.samples.last!.clockNs, since: baseClockNs))
        XCTAssertEqual(png.pixel(outlierX, layout.top), PNGPlot.clippedOutline)
        XCTAssertEqual(png.pixel(outlierX, layout.top + 3), PNGPlot.coordinatedColor)
        XCTAssertEqual(png.pixel(outlierX - 3, layout.top + 3), PNGPlot.clippedOutline)
        XCTAssertEqual(png.pixel(outlierX, layout.top + 8), PNGPlot.bandColors.odd)
        // The phase boundary at 2 s is a vertical line; the axes are drawn.
        XCTAssertEqual(png.pixel(layout.x(seconds: 2), layout.y(ms: 2.5)), PNGPlot.boundaryColor)
        XCTAssertEqual(png.pixel(layout.left - 1, (layout.top + layout.bottom) / 2), PNGPlot.axisColor)
        XCTAssertEqual(png.pixel((layout.left + layout.right) / 2 + 1, layout.bottom + 1), PNGPlot.axisColor)
        // Outside the plot area (the margin's corner) is plain background.
        XCTAssertEqual(png.pixel(png.width - 1, png.height - 1), PNGPlot.background)
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
        let data = PNGPlot.pngData(result: coordinated, phases: phases, comparison: (baseline, basePhases),
                                   yMaxMs: 10)
        let png = try DecodedPNG(data)
        let layout = PNGPlot.layout(series: [PlotSeries(result: coordinated, phases: phases),
                                             PlotSeries(result: baseline, phases: basePhases)],
                                    phases: phases, yMaxMs: 10)
        XCTAssertEqual(layout.yMaxMs, 10)
        XCTAssertEqual(png.pixel(layout.x(seconds: 1), layout.y(ms: 8)), PNGPlot.baselineColor)
        XCTAssertEqual(png.pixel(layout.x(seconds: 1), layout.y(ms: 0.2)), PNGPlot.coordinatedColor)
    }
}
