import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// The grid window for real: Xvfb (started by Scripts/test), one X11 window, one ximagesink per view.
final class WindowTests: XCTestCase {
    /// A screenshot as raw RGB, taken by ImageMagick's `import` from the X server (not from our own code).
    struct Screenshot {
        var width: Int, height: Int
        var rgb: [UInt8]

        /// Grabs the whole screen (`import -window <id>` can block on some servers; the root window does not)
        /// and crops the window at the position the X server reports for it (`xwininfo`).
        static func capture(window: UInt) throws -> Screenshot {
            let info = try runTool("/usr/bin/xwininfo", ["-id", String(window)])
            guard info.status == 0 else { throw TestFailure("xwininfo failed: \(info.stderr)") }
            func field(_ name: String) throws -> Int {
                guard let line = info.stdout.split(separator: "\n").first(where: { $0.contains(name) }),
                      let value = Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "")
                else { throw TestFailure("xwininfo has no '\(name)': \(info.stdout)") }
                return value
            }
            let x = try field("Absolute upper-left X"), y = try field("Absolute upper-left Y")
            let w = try field("Width"), h = try field("Height")
            let path = try TestMedia.scratch().appendingPathComponent("window-\(window).ppm").path
            let result = try runTool("/usr/bin/import", ["-window", "root", "-depth", "8", "-crop", "\(w)x\(h)+\(x)+\(y)",
                                                         "+repage", "ppm:\(path)"])
            guard result.status == 0 else { throw TestFailure("import failed: \(result.stderr)") }
            return try parsePPM(Data(contentsOf: URL(fileURLWithPath: path)))
        }

        /// Binary PPM (P6, maxval 255).
        static func parsePPM(_ data: Data) throws -> Screenshot {
            let bytes = [UInt8](data)
            var fields: [String] = []
            var index = 0
            while fields.count < 4 && index < bytes.count {
                while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 { index += 1 }
                if bytes[index] == UInt8(ascii: "#") { while bytes[index] != 0x0A { index += 1 }; continue }
                var token = ""
                while index < bytes.count, !(bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09) {
                    token.append(Character(UnicodeScalar(bytes[index]))); index += 1
                }
                fields.append(token)
            }
            index += 1
            guard fields.count == 4, fields[0] == "P6", let w = Int(fields[1]), let h = Int(fields[2]), fields[3] == "255",
                  bytes.count - index >= w * h * 3 else { throw TestFailure("not a P6 PPM: \(fields)") }
            return Screenshot(width: w, height: h, rgb: Array(bytes[index..<(index + w * h * 3)]))
        }

        /// Share of pixels in the rectangle whose brightest channel exceeds `threshold`.
        func litFraction(x: Int, y: Int, width w: Int, height h: Int, threshold: UInt8 = 40) -> Double {
            var lit = 0
            for row in y..<min(y + h, height) {
                for column in x..<min(x + w, width) {
                    let i = (row * width + column) * 3
                    if max(rgb[i], rgb[i + 1], rgb[i + 2]) > threshold { lit += 1 }
                }
            }
            return Double(lit) / Double(w * h)
        }
    }

    func testGridWindowShowsEveryTileNonBlack() async throws {
        try Services.requireDisplay()
        let media = try TestMedia.allVisible()
        let stage = Stage(configuration: StageConfiguration(sources: media.map(MediaSource.init), headless: false,
                                                            duration: 8, audio: .fakeSink), reporter: RecordingReporter())
        let run = Task { await stage.run() }
        let playing = await eventually(timeout: .seconds(10)) {
            let players = await stage.currentPlayers
            guard players.count == media.count else { return false }
            for p in players where await p.currentStatus.state != .playing { return false }
            return true
        }
        XCTAssertTrue(playing, "every view reached PLAYING in the window")
        let maybeWindow = await stage.gridWindow
        let window = try XCTUnwrap(maybeWindow, "the stage opened no window although a display is up")
        try await Task.sleep(for: .seconds(1.5))
        let shot = try Screenshot.capture(window: window.windowID)
        XCTAssertEqual(shot.width, window.width)
        XCTAssertEqual(shot.height, window.height)
        for (index, tile) in window.tiles.enumerated() {
            let origin = window.tileOrigins[index]
            let lit = shot.litFraction(x: origin.x, y: origin.y, width: tile.width, height: tile.height)
            XCTAssertGreaterThan(lit, 0.05, "tile \(index + 1) (\(media[index])) is (almost) black: \(lit)")
        }
        await stage.send(.quit)
        let outcome = await run.value
        XCTAssertTrue(outcome.usedWindow)
        XCTAssertEqual(outcome.exitCode, 0, "\(outcome.failures)")
    }
}
