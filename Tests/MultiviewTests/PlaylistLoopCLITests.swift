import Foundation
import TestSupport
import XCTest
@testable import Multiview

/// Playlists, folders and `--loop` through the built `multiview`, on real media copied into a temp folder.
final class PlaylistLoopCLITests: XCTestCase {
    private var binary: String { TestMedia.root.appendingPathComponent(".build/debug/multiview").path }
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mv-playlist-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("clips"), withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func copy(_ media: String, to name: String) throws {
        try FileManager.default.copyItem(atPath: media, toPath: folder.appendingPathComponent(name).path)
    }

    private func lastStatus(_ stdout: String) -> String { stdout.split(separator: "\n").last.map(String.init) ?? "" }

    /// A folder gives its media by name (a text file skipped with one note), an .m3u its entries resolved against
    /// its own folder: four views from two arguments, all playing.
    func testAFolderAndAnM3UPlayAsTheirEntries() throws {
        try copy(TestMedia.angles[1], to: "clips/b-left.webm")
        try copy(TestMedia.angles[0], to: "clips/a-wide.mp4")
        try "not media".write(to: folder.appendingPathComponent("clips/notes.txt"), atomically: true, encoding: .utf8)
        try copy(TestMedia.angles[2], to: "right.mkv")
        let list = folder.appendingPathComponent("list.m3u")
        try "#EXTM3U\n#EXTINF:24,Right\nright.mkv\n#EXTINF:24,Overhead\n\(TestMedia.angles[3])\n"
            .write(to: list, atomically: true, encoding: .utf8)

        // Wide enough for every name (a pipe's line is 120 columns unless COLUMNS says otherwise).
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "200"
        // 6 s: four debug-build views must all be PLAYING in the last status line, under the shards' load too.
        let result = try runTool(binary, ["play", "--headless", "--no-audio", "--duration", "6",
                                          folder.appendingPathComponent("clips").path, list.path], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("clips: skipped 1 item that is not media (notes.txt)"), result.stderr)
        // Each entry is a view that played. Not "PLAYING in the last line": on two cores loaded by the other shards a
        // view whose decoding fell behind drops its late frames, and 500 ms without a frame is shown as BUFFERING by
        // the starvation watch (VideoStarvationWatch) until frames come again (test-repeat on 5f0fa5f: views 2 and
        // 3 BUFFERING in the last line at 0:05, 1 run in 3). The last line still lists all four, none failed.
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let last = lastStatus(result.stdout)
        for entry in ["1 a-wide.mp4", "2 b-left.webm", "3 right.mkv", "4 angle4-overhead.mp4"] {
            XCTAssertTrue(lines.contains { $0.contains(entry + " PLAYING 0:0") && !$0.contains(entry + " PLAYING 0:00") },
                          "'\(entry)' never PLAYING past 0:00: \(result.stdout)")
            XCTAssertTrue(last.contains(entry), "no '\(entry)' in \(last)")
        }
        XCTAssertFalse(last.contains("FAILED") || last.contains("ENDED"), last)
        XCTAssertLessThanOrEqual(last.count, 200, last)
    }

    func testAFolderWithoutMediaIsOneLine() throws {
        try "x".write(to: folder.appendingPathComponent("clips/readme.txt"), atomically: true, encoding: .utf8)
        let result = try runTool(binary, ["play", "--headless", "--no-audio", folder.appendingPathComponent("clips").path])
        XCTAssertEqual(result.status, 64, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("error: "), result.stderr)
        XCTAssertTrue(result.stderr.contains("clips: no media files in this folder"), result.stderr)
    }

    /// `--loop`: sent near the end, the view reaches it and starts again from 0, playing; the run goes on.
    func testLoopStartsAViewAgainAtItsEnd() throws {
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--loop", "--duration", "60", TestMedia.angle1])
        defer { app.kill() }
        XCTAssertTrue(app.wait { $0.stdout.contains("1 angle1-wide.mp4 PLAYING") }, app.transcript)
        app.send("seek 22.5")
        XCTAssertTrue(app.wait { $0.stderr.contains("note: view 1 (angle1-wide.mp4): loop: back to the start") }, app.transcript)
        let after = app.stdout.count
        XCTAssertTrue(app.wait { String($0.stdout.dropFirst(after)).contains("1 angle1-wide.mp4 PLAYING 0:0") },
                      "playing again from the start: \(app.transcript)")
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        XCTAssertFalse(app.stdout.contains("ENDED"), app.transcript)
    }

    /// Coordinated, the group loops together: one group seek to 0 once every view has ended.
    func testCoordinatedViewsLoopTogether() throws {
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--coordinated", "--loop", "--duration", "60",
                                   TestMedia.angles[0], TestMedia.angles[1]])
        defer { app.kill() }
        XCTAssertTrue(app.wait { $0.stdout.split(separator: "\n").last?.components(separatedBy: " PLAYING").count == 3 },
                      app.transcript)
        app.send("seek 22.5")
        XCTAssertTrue(app.wait { $0.stderr.contains("note: loop: every view back to the start") }, app.transcript)
        let after = app.stdout.count
        XCTAssertTrue(app.wait {
            String($0.stdout.dropFirst(after)).split(separator: "\n").contains {
                $0.contains("1 angle1-wide.mp4 PLAYING 0:0") && $0.contains("2 angle2-left.webm PLAYING 0:0")
            }
        }, "both playing again from the start: \(app.transcript)")
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        XCTAssertEqual(app.stderr.components(separatedBy: "note: loop: every view back to the start").count - 1, 1, app.transcript)
    }
}
