@testable import GStreamer
import XCTest

/// Pure: which URIs `MediaInfo.discover` treats as HLS playlists, whose languages come from the playlist and which
/// the language scan leaves alone (its brief adaptivedemux2 pipeline could hang for good when stopped: the
/// demuxer joined its loop thread while that thread's main loop never got the quit; stacks from a hung `multiview
/// info` on an HLS master, once in a test-repeat run and 1 of 3 runs by hand, later 0 of 100).
final class PlaylistURITests: XCTestCase {
    func testM3U8PathsAreHLSPlaylistsWhateverTheCaseOrQuery() {
        XCTAssertTrue(MediaInfo.isPlaylist("file:///media/hls/angle1/master.m3u8"))
        XCTAssertTrue(MediaInfo.isPlaylist("http://127.0.0.1:8080/angle1/MASTER.M3U8"))
        XCTAssertTrue(MediaInfo.isPlaylist("https://cdn.example/live/index.m3u8?token=abc#t=10"))
    }

    func testMediaFilesAndLookalikesAreNot() {
        XCTAssertFalse(MediaInfo.isPlaylist("file:///media/angle1-wide.mp4"))
        XCTAssertFalse(MediaInfo.isPlaylist("http://127.0.0.1:8080/get?file=master.m3u8x"))
        XCTAssertFalse(MediaInfo.isPlaylist("file:///media/m3u8/notes.txt"))
        XCTAssertFalse(MediaInfo.isPlaylist("http://127.0.0.1/stream?name=a.mp4&list=b.m3u8.bak"))
    }
}
