import Foundation
import HLS
import Priority
import TestSupport
import XCTest

/// What Scripts/make-hls promises (its header): four rungs, 2 s segments, en + fr audio renditions, an I-frame
/// playlist per rung whose byte ranges hold exactly one decodable frame.
final class MakeHLSTests: XCTestCase {
    func testEveryAngleHasFourRungsTwoAudioRenditionsAndIFramePlaylists() throws {
        try HLSFixture.ensure()
        for angle in 1...4 {
            let dir = "\(HLSFixture.root)/angle\(angle)"
            let master = try String(contentsOfFile: "\(dir)/master.m3u8", encoding: .utf8)
            let rungs = try MasterPlaylist.parse(master).rungs
            XCTAssertEqual(rungs.compactMap(\.height), [360, 540, 720, 1080], "angle\(angle)")
            XCTAssertEqual(zip(rungs, rungs.dropFirst()).filter { $0.bandwidth >= $1.bandwidth }.count, 0)
            XCTAssertTrue(master.contains("LANGUAGE=\"en\"") && master.contains("LANGUAGE=\"fr\""), "angle\(angle)")
            XCTAssertEqual(master.components(separatedBy: "#EXT-X-I-FRAME-STREAM-INF").count - 1, 4)
            for folder in ["v360", "v540", "v720", "v1080"] {
                let media = try String(contentsOfFile: "\(dir)/\(folder)/index.m3u8", encoding: .utf8)
                let durations = media.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
                    .compactMap { Double($0.dropFirst(8).split(separator: ",")[0]) }
                XCTAssertGreaterThanOrEqual(durations.count, 12)
                for d in durations.dropLast() { XCTAssertEqual(d, 2.0, accuracy: 0.05, "\(folder) segment duration") }
                XCTAssertTrue(media.contains("#EXT-X-ENDLIST"))
                let iframes = try String(contentsOfFile: "\(dir)/\(folder)/iframes.m3u8", encoding: .utf8)
                XCTAssertTrue(iframes.contains("#EXT-X-I-FRAMES-ONLY"))
                XCTAssertEqual(iframes.components(separatedBy: "#EXT-X-BYTERANGE:").count - 1, durations.count)
            }
        }
    }

    func testAnIFrameByteRangeDecodesToExactlyOneFrameOfItsRung() throws {
        try HLSFixture.ensure()
        let dir = "\(HLSFixture.root)/angle3/v720"
        let iframes = try String(contentsOfFile: "\(dir)/iframes.m3u8", encoding: .utf8)
        let ranges = iframes.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-BYTERANGE:") }
        let second = try XCTUnwrap(ranges.dropFirst().first)
        let parts = second.dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
        XCTAssertEqual(parts.count, 2)
        let segment = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/seg00001.ts"))
        let scratch = try TemporaryDirectory(prefix: "priority-tests")
        let cut = segment.subdata(in: parts[1]..<(parts[1] + parts[0]))
        try cut.write(to: URL(fileURLWithPath: scratch.path("iframe.ts")))
        let decoded = try runTool("/usr/bin/gst-launch-1.0", [
            "-q", "filesrc", "location=\(scratch.path("iframe.ts"))", "!", "tsdemux", "!", "h264parse", "!",
            "avdec_h264", "!", "videoconvert", "!", "pngenc", "!", "multifilesink", "location=\(scratch.path("frame-%d.png"))"])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        let frames = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.hasSuffix(".png") }
        XCTAssertEqual(frames.count, 1, "\(frames)")
        // PNG IHDR: width and height, big-endian, at bytes 16..23.
        if let png = frames.first.flatMap({ FileManager.default.contents(atPath: scratch.path($0)) }), png.count > 24 {
            let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }, height = png[20..<24].reduce(0) { $0 << 8 | Int($1) }
            XCTAssertEqual([width, height], [1280, 720])
        }
    }
}
