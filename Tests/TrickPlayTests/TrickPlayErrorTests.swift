import Foundation
import HLS
import XCTest
@testable import TrickPlay

/// `TrickPlayError`: what HLS's playlist errors become in trick play. Pure.
final class TrickPlayErrorTests: XCTestCase {
    /// A playlist failure reads the same as trick play's own error (the parser lives in HLS now).
    func testPlaylistErrorsBecomeTrickPlayErrorsWithTheSameWords() {
        let url = "http://host/a/master.m3u8"
        let missing = HLSPlaylistError.noIFramePlaylist(url: url)
        XCTAssertEqual(TrickPlayError(missing), .noIFramePlaylist(url: url))
        XCTAssertEqual(TrickPlayError(missing).description, missing.description)
        let malformed = HLSPlaylistError.malformed(url: url, reason: "no I-frames listed")
        XCTAssertEqual(TrickPlayError(malformed), .malformed(url: url, reason: "no I-frames listed"))
        XCTAssertEqual(TrickPlayError(malformed).description, "\(url): no I-frames listed")
    }

    func testEachFailureIsOneLineNamingWhatFailed() {
        XCTAssertEqual(TrickPlayError.download(url: "http://h/i.m3u8", reason: "HTTP 404").description,
                       "cannot download http://h/i.m3u8: HTTP 404")
        XCTAssertEqual(TrickPlayError.noIFramePlaylist(url: "http://h/m.m3u8").description,
                       "http://h/m.m3u8 has no EXT-X-I-FRAME-STREAM-INF (no I-frame playlist)")
        XCTAssertEqual(TrickPlayError.decode(url: "http://h/s.ts", reason: "no picture").description,
                       "cannot decode the I-frame from http://h/s.ts: no picture")
        XCTAssertEqual(TrickPlayError.encode(path: "/tmp/p.png", reason: "read-only").description,
                       "cannot encode the preview for /tmp/p.png: read-only")
        let viewError = TrickPlayViewError(view: "2 (angle2/master.m3u8)", cause: .noIFramePlaylist(url: "http://h/m.m3u8"))
        XCTAssertEqual(viewError.description,
                       "view 2 (angle2/master.m3u8): trick play: http://h/m.m3u8 has no EXT-X-I-FRAME-STREAM-INF (no I-frame playlist)")
        XCTAssertFalse(viewError.description.contains("\n"))
    }

    /// Trick play's own parsers throw its error type, with the playlist's URL.
    func testAMasterWithoutIFramePlaylistsFailsAsTrickPlay() {
        let base = URL(string: "http://host/angle1/master.m3u8")!
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nv360/index.m3u8\n"
        XCTAssertThrowsError(try TrickPlaylists.variants(fromMaster: master, baseURL: base)) { error in
            XCTAssertEqual(error as? TrickPlayError, .noIFramePlaylist(url: base.absoluteString))
        }
    }
}
