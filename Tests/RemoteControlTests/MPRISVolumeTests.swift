import Foundation
import TestSupport
import XCTest

/// MPRIS `Volume` (issue 16): a remote's volume reaches every view of `multiview play` and is published back,
/// clamped to the stage's 0 … 150 %. Real CLI, private session bus, gdbus as the client.
final class MPRISVolumeTests: XCTestCase {
    func testRemoteVolumeReachesEveryViewAndIsPublished() async throws {
        let bus = try SessionBus()
        defer { bus.stop() }
        let app = try Child(TestMedia.multiview, ["play", "--headless", "--no-audio", "--duration", "60",
                                                  TestMedia.angle1, TestMedia.angle3], environment: bus.environment)
        defer { _ = app.stop() }
        let playing = try await eventually(timeout: .seconds(40)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Playing"
        }
        XCTAssertTrue(playing, "never Playing; stderr: \(app.output.stderr)")
        XCTAssertEqual(try volume(bus), "(<1.0>,)")

        try setVolume(0.5, bus: bus)
        let applied = await eventually(timeout: .seconds(10)) { app.output.stderr.contains("note: volume: 1 50%, 2 50%") }
        XCTAssertTrue(applied, "the views did not take 50 %: \(app.output.stderr)")
        XCTAssertEqual(try volume(bus), "(<0.5>,)")
        app.send("s")
        let shown = await eventually(timeout: .seconds(5)) {
            app.output.stdout.split(separator: "\n").last.map { $0.components(separatedBy: "[vol 50%]").count == 3 } == true
        }
        XCTAssertTrue(shown, "both views show vol 50%: \(app.output.stdout.suffix(400))")

        // Beyond the range: clamped to 150 %, published as applied.
        try setVolume(4, bus: bus)
        let clamped = await eventually(timeout: .seconds(10)) { app.output.stderr.contains("note: volume: 1 150%, 2 150%") }
        XCTAssertTrue(clamped, app.output.stderr)
        XCTAssertEqual(try volume(bus), "(<1.5>,)")
    }

    private func setVolume(_ volume: Double, bus: SessionBus) throws {
        let result = try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.multiview",
                                                    "--object-path", "/org/mpris/MediaPlayer2", "--method",
                                                    "org.freedesktop.DBus.Properties.Set", "org.mpris.MediaPlayer2.Player",
                                                    "Volume", "<\(volume)>"], environment: bus.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    private func volume(_ bus: SessionBus) throws -> String {
        try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.multiview", "--object-path",
                                       "/org/mpris/MediaPlayer2", "--method", "org.freedesktop.DBus.Properties.Get",
                                       "org.mpris.MediaPlayer2.Player", "Volume"], environment: bus.environment)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
