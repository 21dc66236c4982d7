import HLS
import Priority
import XCTest

/// A multi-variant playlist read as the allocator's ladder (pure).
final class MasterPlaylistRungsTests: XCTestCase {
    func testVariantsBecomeRungsInBandwidthOrder() throws {
        let playlist = try MasterPlaylist.parse("""
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=5466121,RESOLUTION=1920x1080
            v1080/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=696401,RESOLUTION=640x360
            v360/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=52767,RESOLUTION=640x360,URI="v360/iframes.m3u8"
            """)
        XCTAssertEqual(playlist.rungs, [Rung(bandwidth: 696_401, width: 640, height: 360),
                                        Rung(bandwidth: 5_466_121, width: 1920, height: 1080)])
    }
}
