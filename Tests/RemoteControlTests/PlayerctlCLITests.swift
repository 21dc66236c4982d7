import Foundation
import TestSupport
import XCTest

/// The real `multiview play --coordinated` process on a private session bus, driven by the real `playerctl`
/// (and `gdbus` for the Rate property, which playerctl cannot set), watched with `dbus-monitor`.
final class PlayerctlCLITests: XCTestCase {
    func testPlayerctlDrivesTheCoordinatedGroup() async throws {
        let bus = try SessionBus()
        defer { bus.stop() }
        let monitor = try Child("/usr/bin/dbus-monitor", ["--address", bus.address,
                                                         "type='signal',path='/org/mpris/MediaPlayer2'"],
                                environment: bus.environment)
        defer { _ = monitor.stop() }
        let app = try Child(TestMedia.multiview, ["play", "--headless", "--coordinated", "--no-audio", "--duration", "90",
                                                  TestMedia.angle1, TestMedia.angle3], environment: bus.environment)
        var exited = false
        defer { if !exited { _ = app.stop() } }

        // Registered under the plain name, and playing.
        let playing = try await eventually(timeout: .seconds(40)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Playing"
        }
        XCTAssertTrue(playing, "playerctl status never said Playing; stderr: \(app.output.stderr)")
        let names = try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                                               "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames"],
                            environment: bus.environment).stdout
        XCTAssertTrue(names.contains("'org.mpris.MediaPlayer2.multiview'"), names)

        // Metadata: title (file name: angle1 has no title tag), length, track id, the views' names.
        let title = try playerctl(["-p", "multiview", "metadata", "--format", "{{xesam:title}}|{{mpris:length}}|{{mpris:trackid}}"], bus: bus).stdout
        XCTAssertEqual(title, "angle1-wide.mp4|24000000|'/org/mpris/MediaPlayer2/multiview/item1'")
        let metadata = try playerctl(["-p", "multiview", "metadata"], bus: bus).stdout
        XCTAssertTrue(metadata.contains("multiview:views") && metadata.contains("angle3-right.mkv"), metadata)

        // Rate 2 (a property write): PropertiesChanged carries the new Rate and the group plays at 2×.
        try setRate(2.0, bus: bus)
        let rateSignal = await eventually(timeout: .seconds(15)) {
            parseMonitor(monitor.output.stdout).contains {
                $0.member == "PropertiesChanged" && $0.body.contains("\"Rate\"") && $0.body.contains("double 2")
            }
        }
        XCTAssertTrue(rateSignal, "no PropertiesChanged(Rate 2):\n\(monitor.output.stdout.suffix(2000))")
        let rate = try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.multiview",
                                              "--object-path", "/org/mpris/MediaPlayer2", "--method",
                                              "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2.Player", "Rate"],
                           environment: bus.environment).stdout
        XCTAssertTrue(rate.contains("<2.0>"), rate)
        // Measured once both views play at the new rate together (no view waiting, positions within 0.3 s): a view
        // still being caught up after the rate change jumps forward meanwhile (view 2 "moved" 6.1 s in 2.3 s, a
        // repeat run on 185843d, while view 1 moved 4.6 s and the two ended together).
        let together = await eventually(timeout: .seconds(15)) {
            app.send("s")
            try? await Task.sleep(for: .milliseconds(300))
            guard let line = app.output.stdout.split(separator: "\n").last(where: { $0.hasPrefix("[") }),
                  !line.contains("waiting"), let views = lastStatus(app.output.stdout), views.count == 2,
                  views.allSatisfy({ $0.state == "PLAYING" }) else { return false }
            return abs(views[0].seconds - views[1].seconds) <= 0.3
        }
        XCTAssertTrue(together, "the views never played together at 2×: \(app.output.stdout.split(separator: "\n").last ?? "")")
        let start = lastStatus(app.output.stdout) ?? []
        try await Task.sleep(for: .seconds(2))
        app.send("s")
        try await Task.sleep(for: .milliseconds(300))
        let end = lastStatus(app.output.stdout) ?? []
        XCTAssertEqual(start.count, 2); XCTAssertEqual(end.count, 2)
        if start.count == 2, end.count == 2 {
            for i in 0..<2 {
                // 2.3 s of wall time at 2× ≈ 4.6 s of media (generous: a loaded 2-core machine).
                XCTAssertEqual(end[i].seconds - start[i].seconds, 4.6, accuracy: 1.2, "view \(i + 1) not at 2×")
            }
            XCTAssertEqual(end[0].seconds, end[1].seconds, accuracy: 0.3, "views apart")
        }

        // Back to 1× for the rest (the media is 24 s long).
        try setRate(1.0, bus: bus)
        let normal = await eventually(timeout: .seconds(15)) {
            parseMonitor(monitor.output.stdout).contains {
                $0.member == "PropertiesChanged" && $0.body.contains("\"Rate\"") && $0.body.contains("double 1")
            }
        }
        XCTAssertTrue(normal, "no PropertiesChanged(Rate 1)")

        // Pause: every coordinated view pauses.
        try playerctl(["-p", "multiview", "pause"], bus: bus)
        let paused = try await eventually(timeout: .seconds(15)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Paused"
        }
        XCTAssertTrue(paused, "status never became Paused")
        app.send("s")
        let bothPaused = await eventually(timeout: .seconds(5)) {
            app.send("s")
            try? await Task.sleep(for: .milliseconds(200))
            return lastStatus(app.output.stdout)?.allSatisfy { $0.state == "PAUSED" } == true
        }
        XCTAssertTrue(bothPaused, "not every view paused: \(app.output.stdout.split(separator: "\n").last ?? "")")

        // Position 12: the group jumps there; a Seeked signal says so.
        try playerctl(["-p", "multiview", "position", "12"], bus: bus)
        let moved = await eventually(timeout: .seconds(15)) {
            app.send("s")
            try? await Task.sleep(for: .milliseconds(200))
            guard let views = lastStatus(app.output.stdout), views.count == 2 else { return false }
            return views.allSatisfy { abs($0.seconds - 12) < 0.3 }
        }
        XCTAssertTrue(moved, "views not at 12 s: \(app.output.stdout.split(separator: "\n").last ?? "")")
        let position = Double(try playerctl(["-p", "multiview", "position"], bus: bus).stdout) ?? -1
        XCTAssertEqual(position, 12, accuracy: 0.3)
        let seeked = await eventually(timeout: .seconds(5)) {
            parseMonitor(monitor.output.stdout).contains { $0.member == "Seeked" && $0.body.contains("int64 12000000") }
        }
        XCTAssertTrue(seeked, "no Seeked(12000000) signal:\n\(monitor.output.stdout.suffix(2000))")

        // Play again: Playing. Then steady playback publishes nothing (no timer; clients extrapolate).
        try playerctl(["-p", "multiview", "play"], bus: bus)
        let resumed = try await eventually(timeout: .seconds(15)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Playing"
        }
        XCTAssertTrue(resumed)
        try await Task.sleep(for: .milliseconds(500))
        let before = parseMonitor(monitor.output.stdout).count
        try await Task.sleep(for: .seconds(3))
        let during = parseMonitor(monitor.output.stdout).dropFirst(before)
        XCTAssertTrue(during.isEmpty, "signals during steady playback: \(during.map(\.member))")

        // Quit over MPRIS ends the process cleanly; the name goes away with it.
        try playerctl(["-p", "multiview", "stop"], bus: bus)
        let stopped = try await eventually(timeout: .seconds(15)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Stopped"
        }
        let finalStatus = try playerctl(["-p", "multiview", "status"], bus: bus)
        XCTAssertTrue(stopped, "Stop did not report Stopped: \(finalStatus) \(app.output.stderr) \(app.output.stdout.suffix(300))")
        try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.multiview", "--object-path",
                                   "/org/mpris/MediaPlayer2", "--method", "org.mpris.MediaPlayer2.Quit"],
                environment: bus.environment)
        let quit = await eventually(timeout: .seconds(20)) { !app.isRunning }
        XCTAssertTrue(quit, "Quit did not end multiview")
        exited = true
        XCTAssertEqual(app.stop(), 0, app.output.stderr)
    }

    private func setRate(_ rate: Double, bus: SessionBus) throws {
        try runTool("/usr/bin/gdbus", ["call", "--session", "--dest", "org.mpris.MediaPlayer2.multiview", "--object-path",
                                       "/org/mpris/MediaPlayer2", "--method", "org.freedesktop.DBus.Properties.Set",
                                       "org.mpris.MediaPlayer2.Player", "Rate", "<\(rate)>"], environment: bus.environment)
    }

    /// Without a session bus, `play` says so in one note and plays anyway.
    func testMissingSessionBusIsOneNote() async throws {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/multiview-test-bus"
        // 6 s: the view must play (a run whose views never played exits 1), under the shards' load too.
        let result = try runTool(TestMedia.multiview, ["play", "--headless", "--no-audio", "--duration", "6", TestMedia.angle1],
                             environment: env, timeout: .seconds(60))
        XCTAssertEqual(result.status, 0, result.stderr)
        let notes = result.stderr.split(separator: "\n").filter { $0.contains("MPRIS") }
        XCTAssertEqual(notes.count, 1, result.stderr)
        XCTAssertTrue(notes.first?.contains("no D-Bus session bus") == true, result.stderr)
        XCTAssertTrue(result.stdout.contains("PLAYING"), result.stdout)
    }
}
