import Foundation
import TestSupport
import XCTest

/// Stdin `add` takes folders and playlists as the command line does: one view per media file, through the built
/// `multiview` with real media copied into a temp folder. Every wait is on an output line.
final class AddFolderCLITests: XCTestCase {
    private var binary: String { TestMedia.root.appendingPathComponent(".build/debug/multiview").path }
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mv-add-\(UUID().uuidString)")
        for sub in ["clips", "empty"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    private func copy(_ media: String, to name: String) throws {
        try FileManager.default.copyItem(atPath: media, toPath: folder.appendingPathComponent(name).path)
    }

    private func playingCount(_ line: Substring) -> Int { line.components(separatedBy: " PLAYING").count - 1 }

    /// Coordinated and headless: `add FOLDER` adds its two media files (by name; a text file skipped with one
    /// note) as views 2 and 3, one line each, and all three play; a folder without media is one error line and
    /// the views play on.
    func testAddAFolderAddsEachOfItsMediaFilesAsAView() throws {
        try copy(TestMedia.angles[1], to: "clips/b-left.webm")
        try copy(TestMedia.angles[0], to: "clips/a-wide.mp4")
        try "not media".write(to: folder.appendingPathComponent("clips/notes.txt"), atomically: true, encoding: .utf8)
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--coordinated", "--duration", "300",
                                   TestMedia.angles[2]])
        defer { app.kill() }
        XCTAssertTrue(app.wait { $0.stdout.contains("1 angle3-right.mkv PLAYING") }, app.transcript)

        app.send("add \(folder.appendingPathComponent("clips").path)")
        XCTAssertTrue(app.wait { $0.stderr.contains("added view 2 (a-wide.mp4)") && $0.stderr.contains("added view 3 (b-left.webm)") },
                      app.transcript)
        XCTAssertTrue(app.stderr.contains("clips: skipped 1 item that is not media (notes.txt)"), app.transcript)
        let after = app.stdout.count
        XCTAssertTrue(app.wait { String($0.stdout.dropFirst(after)).split(separator: "\n").contains { self.playingCount($0) == 3 } },
                      "all three views play: \(app.transcript)")

        app.send("add \(folder.appendingPathComponent("empty").path)")
        XCTAssertTrue(app.wait { $0.stderr.contains("error: add: \(self.folder.appendingPathComponent("empty").path): no media files in this folder") },
                      app.transcript)
        let afterEmpty = app.stdout.count
        XCTAssertTrue(app.wait { String($0.stdout.dropFirst(afterEmpty)).split(separator: "\n").contains { self.playingCount($0) == 3 } },
                      "the three views play on: \(app.transcript)")
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        XCTAssertEqual(app.stderr.components(separatedBy: "added view").count - 1, 2, "one line per view added: \(app.transcript)")
        XCTAssertFalse(app.stderr.contains("FAILED"), app.transcript)
    }

    /// In a window with one spare tile (kept for coordinated views only), `add` of a folder of three files adds the
    /// first (by name) and refuses the other two in one line naming them; the added view plays. `--duration` is
    /// only a backstop: the test quits with `q`.
    func testAddAFolderInAWindowAddsAsManyViewsAsThereAreFreeTiles() throws {
        guard let display = ProcessInfo.processInfo.environment["DISPLAY"], !display.isEmpty else {
            return XCTFail("no DISPLAY: this test needs the test display (run it with Scripts/test)")
        }
        try copy(TestMedia.angles[0], to: "clips/a-wide.mp4")
        try copy(TestMedia.angles[1], to: "clips/b-left.webm")
        try copy(TestMedia.angles[3], to: "clips/c-overhead.mp4")
        let app = try InteractiveCLI([binary, "play", "--no-audio", "--coordinated", "--tile", "160x90", "--spare-tiles", "1",
                                   "--duration", "300", TestMedia.angles[2]])
        defer { app.kill() }
        XCTAssertTrue(app.wait { $0.stdout.contains("1 angle3-right.mkv PLAYING") }, app.transcript)
        XCTAssertFalse(app.stderr.contains("playing headless"), "the window opened: \(app.transcript)")

        let clips = folder.appendingPathComponent("clips").path
        app.send("add \(clips)")
        XCTAssertTrue(app.wait { $0.stderr.contains("added view 2 (a-wide.mp4)") }, app.transcript)
        XCTAssertTrue(app.wait {
            $0.stderr.contains("error: add \(clips): no free tile for 2 more views (b-left.webm, c-overhead.mp4): start with --spare-tiles or headless")
        }, app.transcript)
        let after = app.stdout.count
        XCTAssertTrue(app.wait { String($0.stdout.dropFirst(after)).split(separator: "\n").contains { self.playingCount($0) == 2 } },
                      "the added view plays beside the first: \(app.transcript)")
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        XCTAssertEqual(app.stderr.components(separatedBy: "added view").count - 1, 1, app.transcript)
    }
}
