import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Audio through a real PulseAudio daemon (Scripts/test starts one with a null sink as default).
final class AudioOutputTests: XCTestCase {
    func testEachViewIsItsOwnNamedPulseAudioStream() async throws {
        try Services.requirePulseAudio()
        XCTAssertEqual(AudioOutput.detect(), .pulse(device: nil), "a reachable server must be detected")
        let stage = Stage(configuration: StageConfiguration(
            sources: Array(TestMedia.angles.prefix(3)).map(MediaSource.init), headless: true, duration: 6),
            reporter: RecordingReporter())
        let run = Task { await stage.run() }
        let playing = await eventually {
            let players = await stage.currentPlayers
            guard players.count == 3 else { return false }
            for p in players where await p.currentStatus.state != .playing { return false }
            return true
        }
        XCTAssertTrue(playing)
        // Ask the server, not our bookkeeping: three sink inputs named after the views, role "video".
        let listing = try runTool("/usr/bin/pactl", ["list", "sink-inputs"])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        for name in ["angle1-wide.mp4", "angle2-left.webm", "angle3-right.mkv"] {
            XCTAssertTrue(listing.stdout.contains("media.name = \"\(name)\""), "no stream for \(name):\n\(listing.stdout)")
        }
        XCTAssertEqual(listing.stdout.components(separatedBy: "application.name = \"Multiview\"").count - 1, 3)
        XCTAssertEqual(listing.stdout.components(separatedBy: "media.role = \"video\"").count - 1, 3)
        await stage.send(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.audio, .pulse(device: nil))
        XCTAssertEqual(outcome.exitCode, 0)
    }

    /// `lang 1 audio fr` renamed the view's stream after the French track's title: the name stays the view's.
    func testSwitchingTheAudioTrackKeepsTheStreamsName() async throws {
        try Services.requirePulseAudio()
        let name = "angle3-right.mkv"
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: name),
                                                                   audio: .pulse(device: nil)))
        try await player.load(MediaSource(TestMedia.path(name)))
        try await player.play()
        func streamNames() throws -> [String] {
            let listing = try runTool("/usr/bin/pactl", ["list", "sink-inputs"])
            return listing.stdout.split(separator: "\n").compactMap { line in
                let text = line.trimmingCharacters(in: .whitespaces)
                return text.hasPrefix("media.name = ") ? String(text.dropFirst("media.name = ".count)) : nil
            }
        }
        let named = try await eventually { try streamNames() == ["\"\(name)\""] }
        XCTAssertTrue(named, "\((try? streamNames()) ?? [])")
        for language in ["fr", "en", "fr"] {
            try await player.selectAudio(language: language)
            let selected = await eventually { await player.selectedStreams.contains { $0.kind == .audio && $0.language == language } }
            XCTAssertTrue(selected, language)
            // Past the switch's tags (they arrive with the new track's first buffers).
            try await Task.sleep(for: .milliseconds(700))
            XCTAssertEqual(try streamNames(), ["\"\(name)\""], "after switching to \(language)")
        }
        await player.stop()
    }

    func testCLIReadsCommandsFromStdin() throws {
        let binary = TestMedia.root.appendingPathComponent(".build/debug/multiview").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return XCTFail("\(binary) not built") }
        // Commands run as tasks of their own (a stuck view never holds the others), and a seek sent while the view
        // is still opening is answered at once and applied once it has opened; so `s` is asked until a status line
        // shows where the seek went (10 s at most), then `q` quits before --duration.
        let started = Date()
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--duration", "30", TestMedia.angle1])
        defer { app.kill() }
        app.send("+10\nbogus")
        XCTAssertTrue(app.wait { $0.stderr.contains("+10: done") }, "the +10 s seek never answered: \(app.transcript)")
        func positions(_ stdout: String) -> [Double] {
            stdout.split(separator: "\n").compactMap { line -> Double? in
                guard let range = line.range(of: "PLAYING ") ?? line.range(of: "PAUSED ") else { return nil }
                let time = line[range.upperBound...].split(separator: "/").first ?? ""
                let parts = time.split(separator: ":").compactMap { Double($0) }
                // h:mm:ss.nnn in the full line, m:ss in the compact one a pipe gets.
                return parts.count == 3 ? parts[0] * 3600 + parts[1] * 60 + parts[2]
                     : parts.count == 2 ? parts[0] * 60 + parts[1] : nil
            }
        }
        let askedUntil = Date().addingTimeInterval(10)
        var seen = false
        while !seen && Date() < askedUntil {
            app.send("s")
            seen = app.wait(timeout: .milliseconds(500)) { positions($0.stdout).contains { $0 >= 9.9 } }
        }
        app.send("q")
        XCTAssertEqual(app.waitForExit(), 0, app.transcript)
        XCTAssertLessThan(Date().timeIntervalSince(started), 25, "q on stdin must quit before --duration")
        let result = (stdout: app.stdout, stderr: app.stderr)
        XCTAssertTrue(result.stderr.contains("unknown command 'bogus'"), result.stderr)
        XCTAssertTrue(seen, "the +10 s seek shows in a status line within 10 s: \(result.stdout)")
    }
}
