import Foundation
import HLS
import TestSupport
import TrickPlay
import XCTest

/// The I-frame playlists trick play reads, parsed from the generated HLS fixture files (no pipeline, no server).
final class IFramePlaylistTests: XCTestCase {
    /// The generated angle1 playlists: 4 I-frame variants, and 12 I-frames (one per 2 s segment) with ranges
    /// inside the ordinary segments.
    func testParsesGeneratedPlaylists() throws {
        try HLSFixture.ensure()
        let base = URL(fileURLWithPath: "\(HLSFixture.root)/angle1/master.m3u8")
        let variants = try IFramePlaylist.variants(fromMaster: String(contentsOf: base, encoding: .utf8), baseURL: base)
        XCTAssertEqual(variants.map { $0.height }, [360, 540, 720, 1080])
        XCTAssertEqual(variants.first?.url.lastPathComponent, "iframes.m3u8")
        XCTAssertEqual(variants.first?.url.deletingLastPathComponent().lastPathComponent, "v360")
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: nil)?.height, 360)
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: 500)?.height, 540)
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: 4000)?.height, 1080)

        let media = variants[0].url
        let frames = try IFramePlaylist.iFrames(fromMedia: String(contentsOf: media, encoding: .utf8), baseURL: media)
        XCTAssertEqual(frames.count, 12)
        XCTAssertEqual(frames.map { $0.mediaTime }, stride(from: 0.0, to: 24.0, by: 2.0).map { $0 })
        XCTAssertEqual(frames[3].url.lastPathComponent, "seg00003.ts")
        for frame in frames {
            let size = try FileManager.default.attributesOfItem(atPath: frame.url.path)[.size] as! Int
            let length = try XCTUnwrap(frame.length)
            XCTAssertGreaterThan(length, 188)
            XCTAssertLessThan(length, size, "an I-frame range is a part of its segment, not all of it")
            XCTAssertEqual(length % 188, 0, "whole TS packets")
        }
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: 7), 3)
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: 6), 3)
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: -1), 0)
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: 99), 11)
    }
}
