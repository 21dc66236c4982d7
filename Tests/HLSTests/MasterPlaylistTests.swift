import HLS
import XCTest

/// The multi-variant playlist parser (pure: no download, no pipeline).
final class MasterPlaylistTests: XCTestCase {
    func testParsesVariantsAscendingAndIgnoresIFrameVariants() throws {
        let text = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",URI="audio-en/index.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=5466121,AVERAGE-BANDWIDTH=5361403,RESOLUTION=1920x1080,CODECS="avc1.42c028,mp4a.40.2",AUDIO="aud"
        v1080/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=696401,RESOLUTION=640x360,CODECS="avc1.42c01e,mp4a.40.2"
        v360/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=128000
        audio-only.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=52767,RESOLUTION=640x360,URI="v360/iframes.m3u8"
        """
        let playlist = try MasterPlaylist.parse(text)
        XCTAssertEqual(playlist.variants, [MasterPlaylist.Variant(bandwidth: 128_000),
                                           MasterPlaylist.Variant(bandwidth: 696_401, width: 640, height: 360),
                                           MasterPlaylist.Variant(bandwidth: 5_466_121, width: 1920, height: 1080)])
    }

    func testRejectsGarbageAndMediaPlaylists() {
        XCTAssertThrowsError(try MasterPlaylist.parse("<html>not found</html>")) {
            XCTAssertEqual($0 as? MasterPlaylist.Problem, .notAPlaylist)
        }
        XCTAssertThrowsError(try MasterPlaylist.parse("#EXTM3U\n#EXTINF:2.0,\nseg0.ts\n")) {
            XCTAssertEqual($0 as? MasterPlaylist.Problem, .noVariants)
        }
    }
}
