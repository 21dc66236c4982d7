import XCTest
@testable import SyncAnalysis

final class ReportTests: XCTestCase {
    static let phases = [
        phase(0, "play", from: baseClockNs - 40_000_000, to: baseClockNs + 2_000_000_000),
        phase(1, "seek +10", from: baseClockNs + 2_000_000_000, to: baseClockNs + 4_000_000_000),
    ]

    static func sampleRun(mode: String) -> (frames: [FrameRecord], result: SyncAnalysisResult) {
        let frames = twoViews(indices: Array(0..<60), offsetNs: 300_000, phase: 0)
            + renders(view: 1, indices: Array(360..<420), startClockNs: baseClockNs + 2_050_000_000, phase: 1)
            + renders(view: 2, indices: Array(360..<420), webm: true, offsetNs: 1_000_000,
                      startClockNs: baseClockNs + 2_050_000_000, phase: 1)
        return (frames, SyncAnalyzer.analyze(frames: frames, phases: phases, mode: mode))
    }

    func testSummaryJSONHasExactlyTheRequiredKeys() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (frames, result) = Self.sampleRun(mode: "coordinated")
        var plotted: RGBImage?
        try SyncReportWriter.write(result: result, frames: frames, phases: Self.phases, to: directory) { image in
            plotted = image
            return Data("plot".utf8)
        }

        let data = try Data(contentsOf: directory.appendingPathComponent("summary.json"))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(json.keys),
                       ["mode", "views", "frames", "p50_skew_ms", "p99_skew_ms", "max_skew_ms", "phases"])
        XCTAssertEqual(json["mode"] as? String, "coordinated")
        XCTAssertEqual(json["views"] as? Int, 2)
        XCTAssertEqual(json["frames"] as? Int, 120)
        XCTAssertEqual(try XCTUnwrap(json["max_skew_ms"] as? Double), 1.0, accuracy: 0.01)
        let phases = try XCTUnwrap(json["phases"] as? [[String: Any]])
        XCTAssertEqual(phases.count, 2)
        for phase in phases {
            XCTAssertEqual(Set(phase.keys), ["index", "name", "views", "frames", "p50_skew_ms", "p99_skew_ms",
                                             "max_skew_ms", "time_to_aligned_ms", "slowest_first_frame_ms"])
        }
        XCTAssertEqual(phases[1]["name"] as? String, "seek +10")
        XCTAssertEqual(try XCTUnwrap(phases[1]["p50_skew_ms"] as? Double), 1.0, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(phases[0]["time_to_aligned_ms"] as? Double), 40.3, accuracy: 1e-6)

        // It decodes back to the same summary, and frames.json to the same records.
        XCTAssertEqual(try JSONDecoder().decode(SyncSummary.self, from: data), result.summary)
        let dump = try JSONDecoder().decode(SyncFrameDump.self,
                                            from: Data(contentsOf: directory.appendingPathComponent("frames.json")))
        XCTAssertEqual(dump.frames, frames)
        XCTAssertEqual(dump.phases, Self.phases)
        XCTAssertEqual(dump.mode, "coordinated")
        XCTAssertEqual(dump.fps, 30)
        // The plot of this run went to the encoder, and what it made is skew.png.
        XCTAssertEqual(plotted, PNGPlot.image(result: result, phases: Self.phases))
        XCTAssertEqual(try Data(contentsOf: directory.appendingPathComponent("skew.png")), Data("plot".utf8))
    }

    func testFileStemNamesTheFiles() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (frames, result) = Self.sampleRun(mode: "baseline")
        try SyncReportWriter.write(result: result, frames: frames, phases: Self.phases, to: directory,
                                   fileStem: "baseline") { _ in Data("plot".utf8) }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        XCTAssertEqual(names, ["frames-baseline.json", "skew-baseline.png", "summary-baseline.json"])
    }

    func testSummaryTable() throws {
        let coordinated = Self.sampleRun(mode: "coordinated").result.summary
        var baseline = coordinated
        baseline.mode = "baseline"
        baseline.maxSkewMs = 42.5
        baseline.phases[1].timeToAlignedMs = nil
        let table = SummaryTable.render([coordinated, baseline])
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].contains("coordinated") && lines[0].contains("baseline"))
        XCTAssertLessThan(lines[0].range(of: "coordinated")!.lowerBound, lines[0].range(of: "baseline")!.lowerBound)
        XCTAssertTrue(lines[1].contains("views") && lines[1].contains("p99 ms") && lines[1].contains("aligned ms"))
        let play = try XCTUnwrap(lines.first { $0.hasPrefix("0 play") })
        XCTAssertEqual(play.components(separatedBy: "0.300").count, 7)   // p50, p99, max in both blocks
        let seek = try XCTUnwrap(lines.first { $0.hasPrefix("1 seek +10") })
        XCTAssertTrue(seek.hasSuffix(" -"))                        // baseline's missing aligned time
        let all = try XCTUnwrap(lines.last)
        XCTAssertTrue(all.hasPrefix("all"))
        XCTAssertTrue(all.contains("42.500"))
        XCTAssertTrue(all.contains("120"))

        let single = SummaryTable.render([SyncSummary(mode: "coordinated", views: 0, frames: 0, p50SkewMs: nil,
                                                      p99SkewMs: nil, maxSkewMs: nil, phases: [])])
        XCTAssertEqual(single.split(separator: "\n").count, 5)
        XCTAssertTrue(single.contains("all"))
    }

    func testFontCoversLabels() {
        for character in "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,-+:/()%^" {
            XCTAssertTrue(BitmapFont.hasGlyph(character), "no glyph for \(character)")
            XCTAssertEqual(BitmapFont.glyph(character).count, 7)
            XCTAssertTrue(BitmapFont.glyph(character).allSatisfy { $0 < 32 })
        }
        XCTAssertFalse(BitmapFont.hasGlyph("€"))
        XCTAssertEqual(BitmapFont.width(of: "skew ms", scale: 2), (7 * 6 - 1) * 2)

        var image = RGBImage(width: 20, height: 10)
        BitmapFont.draw("1", x: 2, y: 1, color: .black, into: &image)
        XCTAssertEqual(image[4, 1], .black)     // "1": top row ..#..
        XCTAssertEqual(image[2, 1], .white)
        XCTAssertEqual(image[3, 7], .black)     // bottom row .###.
        XCTAssertEqual(image[2, 7], .white)
    }
}
