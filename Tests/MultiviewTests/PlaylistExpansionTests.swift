import Foundation
import XCTest
@testable import Multiview

/// Folders and plain playlists expand to their entries; an HLS playlist stays one view. Real files in a temp
/// folder; no pipeline, no daemon (milliseconds).
final class PlaylistExpansionTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("playlist-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    @discardableResult
    private func write(_ name: String, _ text: String = "data") throws -> String {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    func testAPlainM3UBecomesItsEntriesResolvedAgainstItsFolder() throws {
        try write("sub/a.mp4"); try write("sub/b.mkv")
        let list = try write("sub/list.m3u", """
            #EXTM3U
            #EXTINF:24,Wide angle
            a.mp4

            #EXTINF:-1,Remote
            http://example.com/c.mp4
            /abs/d.webm
            b.mkv
            """)
        let result = try PlaylistExpansion.expand([list])
        let sub = folder.appendingPathComponent("sub").path
        XCTAssertEqual(result.media, ["\(sub)/a.mp4", "http://example.com/c.mp4", "/abs/d.webm", "\(sub)/b.mkv"])
        XCTAssertEqual(result.notes, [])
    }

    func testAnHLSPlaylistStaysOneView() throws {
        let master = try write("hls/master.m3u8", """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360
            360p/index.m3u8
            """)
        let media = try write("hls/index.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg0.ts\n")
        XCTAssertEqual(try PlaylistExpansion.expand([master, media]).media, [master, media])
        // An m3u8 that is a plain playlist (only #EXTINF) expands like an .m3u.
        try write("x.mp4")
        let plain = try write("plain.m3u8", "#EXTM3U\n#EXTINF:10,x\nx.mp4\n")
        XCTAssertEqual(try PlaylistExpansion.expand([plain]).media, [folder.appendingPathComponent("x.mp4").path])
    }

    func testAFolderBecomesItsMediaByNameAndSkipsTheRestWithOneNote() throws {
        for name in ["clip10.mp4", "clip2.mp4", "Clip1.webm", "notes.txt", "cover.jpg", ".hidden.mp4"] { try write("f/\(name)") }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("f/sub"), withIntermediateDirectories: true)
        let f = folder.appendingPathComponent("f").path
        let result = try PlaylistExpansion.expand([f])
        XCTAssertEqual(result.media, ["\(f)/Clip1.webm", "\(f)/clip2.mp4", "\(f)/clip10.mp4"])
        XCTAssertEqual(result.notes, ["\(f): skipped 3 items that are not media (cover.jpg, notes.txt, sub/)"])
    }

    func testURLsAndPlainFilesAreKeptAndOrderIsKept() throws {
        let a = try write("a.mp4")
        let list = try write("l.m3u", "a.mp4\n")
        let result = try PlaylistExpansion.expand(["https://host/master.m3u8", list, "foo://x", a, "/missing/file.mp4"])
        XCTAssertEqual(result.media, ["https://host/master.m3u8", a, "foo://x", a, "/missing/file.mp4"])
        // A file:// URL to a playlist is a local playlist.
        XCTAssertEqual(try PlaylistExpansion.expand(["file://" + list]).media, [a])
    }

    func testEmptyAndSelfNamingPlaylistsAreOneClearError() throws {
        let empty = try write("empty.m3u", "#EXTM3U\n# nothing here\n")
        XCTAssertThrowsError(try PlaylistExpansion.expand([empty])) { error in
            XCTAssertEqual("\(error)", "\(empty): the playlist names no media")
        }
        let bare = folder.appendingPathComponent("bare").path
        try FileManager.default.createDirectory(atPath: bare, withIntermediateDirectories: true)
        try write("bare/readme.txt")
        XCTAssertThrowsError(try PlaylistExpansion.expand([bare])) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(bare): no media files in this folder"), "\(error)")
        }
        let loop = try write("loop.m3u", "loop.m3u\n")
        XCTAssertThrowsError(try PlaylistExpansion.expand([loop])) { error in
            XCTAssertEqual(error as? PlaylistError, .tooDeep(loop))
        }
    }
}
