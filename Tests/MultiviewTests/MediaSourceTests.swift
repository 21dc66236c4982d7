import Foundation
import Multiview
import XCTest

/// `MediaSource` (paths and URIs → uri, local path, the view's default name) and `ViewIdentity`'s text. Pure.
final class MediaSourceTests: XCTestCase {
    func testAnAbsolutePathBecomesAFileURI() {
        let source = MediaSource("/media/clips/angle1.mp4")
        XCTAssertEqual(source.uri, "file:///media/clips/angle1.mp4")
        XCTAssertEqual(source.path, "/media/clips/angle1.mp4")
        XCTAssertEqual(source.displayName, "angle1.mp4")
        XCTAssertEqual(source.description, "/media/clips/angle1.mp4")
    }

    func testARelativePathIsResolvedAgainstTheWorkingDirectory() {
        let source = MediaSource("clips/angle1.mp4")
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertEqual(source.path, URL(fileURLWithPath: cwd).appendingPathComponent("clips/angle1.mp4").standardizedFileURL.path)
        XCTAssertTrue(source.uri.hasPrefix("file:///"), source.uri)
        XCTAssertTrue(source.uri.hasSuffix("/clips/angle1.mp4"), source.uri)
    }

    func testPathsAreStandardisedAndEscapedInTheURI() {
        let source = MediaSource("/media/x/../clips/./my clip.mp4")
        XCTAssertEqual(source.path, "/media/clips/my clip.mp4")
        XCTAssertEqual(source.uri, "file:///media/clips/my%20clip.mp4")
        XCTAssertEqual(source.displayName, "my clip.mp4")
    }

    func testAFileURIKeepsItsTextAndGivesThePath() {
        let source = MediaSource("file:///media/my%20clip.mp4")
        XCTAssertEqual(source.uri, "file:///media/my%20clip.mp4")
        XCTAssertEqual(source.path, "/media/my clip.mp4")
        XCTAssertEqual(source.displayName, "my clip.mp4")
    }

    func testNetworkURIsHaveNoPath() {
        let source = MediaSource("https://example.org/live/angle1.mp4")
        XCTAssertEqual(source.uri, "https://example.org/live/angle1.mp4")
        XCTAssertNil(source.path)
        XCTAssertEqual(source.displayName, "angle1.mp4")
        XCTAssertEqual(source.description, "https://example.org/live/angle1.mp4")
    }

    func testHLSPlaylistsAreNamedWithTheirFolder() {
        XCTAssertEqual(MediaSource("http://127.0.0.1:8080/angle1/master.m3u8").displayName, "angle1/master.m3u8")
        XCTAssertEqual(MediaSource("http://host/a/b/angle2/index.M3U8").displayName, "angle2/index.M3U8")
        XCTAssertEqual(MediaSource("http://host/master.m3u8").displayName, "master.m3u8", "no folder to name")
        XCTAssertEqual(MediaSource("http://host/angle1/clip.ts").displayName, "clip.ts", "only playlists")
    }

    func testEqualSourcesHashAlike() {
        XCTAssertEqual(MediaSource("/media/a.mp4"), MediaSource("file:///media/a.mp4").path.map(MediaSource.init))
        XCTAssertEqual(Set([MediaSource("/a.mp4"), MediaSource("/a.mp4"), MediaSource("/b.mp4")]).count, 2)
    }

    func testViewIdentityIsThePrefixOfEveryErrorLine() {
        XCTAssertEqual(ViewIdentity(number: 3, name: "broken.mp4").description, "view 3 (broken.mp4)")
        XCTAssertNotEqual(ViewIdentity(number: 1, name: "a.mp4"), ViewIdentity(number: 2, name: "a.mp4"))
    }
}
