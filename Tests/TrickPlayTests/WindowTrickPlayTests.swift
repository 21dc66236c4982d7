import Foundation
import GStreamer
import Multiview
import TestSupport
import TrickPlay
import XCTest

/// In the grid window (Xvfb, started by Scripts/test) the I-frames are drawn into the view's tile.
final class WindowTrickPlayTests: XCTestCase {
    /// `rew 1` from ~3.6 s reaches the start in well under a second and leaves the I-frame at 0 s in the tile:
    /// the screenshot of the tile (ImageMagick `import` from the X server) is close to the decoded 0 s I-frame and
    /// farther from the decoded I-frame at 2 s (the paused picture's neighbourhood).
    func testRewindDrawsTheIFramesIntoTheTile() async throws {
        let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        guard !display.isEmpty else {
            return XCTFail("no X display (DISPLAY is empty): run the tests through Scripts/test, which starts Xvfb")
        }
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let master = server.url("angle1/master.m3u8")
        var configuration = StageConfiguration(sources: [MediaSource(master.absoluteString)], headless: false,
                                               duration: 20, audio: .fakeSink, tileWidth: 640, tileHeight: 360)
        let trickPlay = TrickPlayStage()
        configuration.trickPlay = trickPlay
        let stage = Stage(configuration: configuration, reporter: StageTrickPlayTests.Reporter())
        let run = Task { await stage.run() }
        defer { run.cancel() }
        try await Task.sleep(for: .seconds(4))
        await stage.send(.pause)
        try await Task.sleep(for: .seconds(1))
        await stage.send(.trickPlay(view: 1, rate: -8))
        let reached = await eventually(timeout: .seconds(5)) { trickPlay.shown.times(ofView: 1).last == 0 }
        XCTAssertTrue(reached, "rewind never showed the I-frame at 0 s: \(trickPlay.shown.times(ofView: 1))")
        try await Task.sleep(for: .milliseconds(500))
        let maybeWindow = await stage.gridWindow
        let window = try XCTUnwrap(maybeWindow, "the stage opened no window although a display is up")
        let tile = try Screen.capture(window: window.windowID, x: window.tileOrigins[0].x, y: window.tileOrigins[0].y,
                                      width: 640, height: 360)

        let reference = TrickPlayer(view: "ref", master: master, viewHeight: 360)
        let atZero = try await reference.preview(at: 0, width: 640, height: 360)
        let atTwo = try await reference.preview(at: 2, width: 640, height: 360)
        let toZero = meanDifference(tile, atZero.rgb), toTwo = meanDifference(tile, atTwo.rgb)
        XCTAssertLessThan(toZero, toTwo, "the tile shows the 0 s I-frame (diff \(toZero)) rather than 2 s (\(toTwo))")
        XCTAssertLessThan(toZero, 3, "tile vs decoded 0 s I-frame, mean abs difference per channel")
        await stage.send(.quit)
        let outcome = await run.value
        XCTAssertTrue(outcome.usedWindow)
        XCTAssertEqual(outcome.failures.map(\.description), [])
    }

    private func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        var total = 0
        for i in 0..<a.count { total += abs(Int(a[i]) - Int(b[i])) }
        return Double(total) / Double(a.count)
    }
}

/// Screenshots from the X server with ImageMagick's `import` (not our own code), cropped to a tile.
enum Screen {
    static func capture(window: UInt, x: Int, y: Int, width: Int, height: Int) throws -> [UInt8] {
        let info = try run("/usr/bin/xwininfo", ["-id", String(window)])
        func field(_ name: String) throws -> Int {
            guard let line = info.split(separator: "\n").first(where: { $0.contains(name) }),
                  let value = Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "")
            else { throw TestFailure("xwininfo has no '\(name)': \(info)") }
            return value
        }
        let left = try field("Absolute upper-left X") + x, top = try field("Absolute upper-left Y") + y
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tile-\(UUID().uuidString).ppm").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try run("/usr/bin/import", ["-window", "root", "-depth", "8", "-crop", "\(width)x\(height)+\(left)+\(top)",
                                        "+repage", "ppm:\(path)"])
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let header = Array("P6\n\(width) \(height)\n255\n".utf8)
        guard data.count == header.count + width * height * 3, Array(data.prefix(header.count)) == header else {
            throw TestFailure("unexpected screenshot format (\(data.count) bytes)")
        }
        return Array(data.dropFirst(header.count))
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let result = try runTool(executable, arguments)
        guard result.status == 0 else { throw TestFailure("\(executable) \(arguments) failed") }
        return result.stdout
    }
}
