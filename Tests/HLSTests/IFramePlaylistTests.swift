import Foundation
import HLS
import XCTest

/// The I-frame playlist parsers with playlists written here (pure; the generated media's playlists are read in
/// TrickPlayTests).
final class IFramePlaylistTests: XCTestCase {
    func testIFrameVariantsAreResolvedSortedAndChosenByHeight() throws {
        let base = URL(string: "http://host/angle/master.m3u8")!
        let text = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=696401,RESOLUTION=640x360
            v360/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,RESOLUTION=1280x720,URI="v720/iframes.m3u8"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=52767,RESOLUTION=640x360,URI="v360/iframes.m3u8"
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=120000,RESOLUTION=960x540,URI="http://other/v540/iframes.m3u8"
            """
        let variants = try IFramePlaylist.variants(fromMaster: text, baseURL: base)
        XCTAssertEqual(variants.map(\.height), [360, 540, 720])
        XCTAssertEqual(variants.map(\.url.absoluteString), ["http://host/angle/v360/iframes.m3u8",
                                                            "http://other/v540/iframes.m3u8",
                                                            "http://host/angle/v720/iframes.m3u8"])
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: nil)?.height, 360)
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: 500)?.height, 540)
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: 540)?.height, 540)
        XCTAssertEqual(IFramePlaylist.choose(variants, forHeight: 4000)?.height, 720)
        XCTAssertNil(IFramePlaylist.choose([], forHeight: 500))
    }

    func testByteRangeWithoutOffsetContinuesAndErrorsAreTyped() throws {
        let base = URL(string: "http://host/a/iframes.m3u8")!
        let text = """
            #EXTM3U
            #EXT-X-I-FRAMES-ONLY
            #EXTINF:1.5,
            #EXT-X-BYTERANGE:376@188
            s.ts
            #EXTINF:1.5,
            #EXT-X-BYTERANGE:564
            s.ts
            """
        let frames = try IFramePlaylist.iFrames(fromMedia: text, baseURL: base)
        XCTAssertEqual(frames.map { $0.offset }, [188, 564])
        XCTAssertEqual(frames.map { $0.length }, [376, 564])
        XCTAssertEqual(frames.map { $0.mediaTime }, [0, 1.5])
        XCTAssertEqual(frames[1].url.absoluteString, "http://host/a/s.ts")
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: 1.49), 0)
        XCTAssertEqual(IFramePlaylist.index(in: frames, at: 1.5), 1)

        XCTAssertThrowsError(try IFramePlaylist.variants(fromMaster: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8",
                                                         baseURL: base)) { error in
            XCTAssertEqual(error as? HLSPlaylistError, .noIFramePlaylist(url: base.absoluteString))
        }
        XCTAssertThrowsError(try IFramePlaylist.iFrames(fromMedia: "#EXTM3U\n#EXTINF:2,\ns.ts", baseURL: base)) {
            XCTAssertEqual($0 as? HLSPlaylistError,
                           .malformed(url: base.absoluteString, reason: "no #EXT-X-I-FRAMES-ONLY (not an I-frame playlist)"))
        }
        XCTAssertThrowsError(try IFramePlaylist.iFrames(fromMedia: "#EXTM3U\n#EXT-X-I-FRAMES-ONLY\ns.ts", baseURL: base)) {
            XCTAssertEqual($0 as? HLSPlaylistError, .malformed(url: base.absoluteString, reason: "URI 's.ts' without EXTINF"))
        }
    }
}
