import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 16's habits on real pipelines: `seek 0:12` lands at 12 s, `volume` / `mute` reach each view's playbin3
/// volume element, `help` and an unknown command on the CLI.
final class StageHabitsTests: XCTestCase {
    /// Two headless views of the 24 s media, playing; the caller sends commands and quits.
    private func startTwoViews(_ reporter: RecordingReporter)
        async throws -> (Stage, AsyncStream<StageCommand>.Continuation, Task<StageOutcome, Never>) {
        let stage = Stage(configuration: StageConfiguration(
            sources: Array(TestMedia.angles.prefix(2)).map(MediaSource.init), headless: true, duration: 20,
            audio: .fakeSink, statusInterval: .milliseconds(200)), reporter: reporter)
        let running = await startStage(stage, views: 2, timeout: .seconds(10))
        return (running.stage, running.input, running.run)
    }

    private func command(_ line: String) throws -> StageCommand { try StageCommand.read(line).get() }

    func testSeekClockTimeLandsThere() async throws {
        let (stage, input, run) = try await startTwoViews(RecordingReporter())
        input.yield(try command("seek 0:12"))
        let landed = await eventually {
            for p in await stage.currentPlayers {
                guard let position = p.queryPosition()?.seconds, (12...14).contains(position) else { return false }
            }
            return true
        }
        let players = await stage.currentPlayers
        XCTAssertTrue(landed, "every view at 12…14 s: \(players.map { $0.queryPosition()?.seconds ?? -1 })")
        input.yield(try command("seek -0:05"))
        let back = await eventually {
            for p in await stage.currentPlayers {
                guard let position = p.queryPosition()?.seconds, (6.5...10).contains(position) else { return false }
            }
            return true
        }
        XCTAssertTrue(back, "seek -0:05 went back about 5 s: \(players.map { $0.queryPosition()?.seconds ?? -1 })")
        input.yield(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0)
    }

    /// The volume elements playbin3 put in view `player`'s pipeline (its "soft-volume" one is among them).
    private func volumeElements(_ player: Player) -> [(volume: Double, muted: Bool)] {
        player.pipeline.descendants { $0.factoryName == "volume" }.compactMap { element in
            guard let volume = try? element.get("volume", as: Double.self),
                  let muted = try? element.get("mute", as: Bool.self) else { return nil }
            return (volume, muted)
        }
    }

    func testVolumeAndMuteReachEachViewsVolumeElement() async throws {
        let reporter = RecordingReporter()
        let (stage, input, run) = try await startTwoViews(reporter)
        let players = await stage.currentPlayers
        XCTAssertFalse(volumeElements(players[0]).isEmpty, "playbin3 soft volume element present")

        input.yield(try command("volume 2 50"))
        let halved = await eventually { self.volumeElements(players[1]).contains { abs($0.volume - 0.5) < 1e-6 } }
        XCTAssertTrue(halved, "view 2's volume element at 0.5: \(volumeElements(players[1]))")
        XCTAssertEqual(try players[0].audioLevel, Player.AudioLevel(volume: 1, muted: false), "view 1 untouched")
        XCTAssertEqual(try players[1].audioLevel, Player.AudioLevel(volume: 0.5, muted: false))

        input.yield(try command("mute"))
        let muted = await eventually {
            players.allSatisfy { p in self.volumeElements(p).contains { $0.muted } }
        }
        XCTAssertTrue(muted, "mute muted every view")
        input.yield(try command("mute 1"))
        let oneBack = await eventually { (try? players[0].audioLevel.muted) == false }
        XCTAssertTrue(oneBack, "mute 1 unmuted view 1 only")
        XCTAssertEqual(try players[1].audioLevel.muted, true)
        input.yield(try command("volume +10"))
        let stepped = await eventually { (try? players[1].audioLevel.volume).map { abs($0 - 0.6) < 1e-6 } == true }
        XCTAssertTrue(stepped, "volume +10 took view 2 from 50 % to 60 %")
        XCTAssertEqual(try players[0].audioLevel.volume, 1.1, accuracy: 1e-6)
        input.yield(.status)
        let shown = await eventually {
            reporter.statusLines.last.map { $0.contains("[muted]") && $0.contains("[vol 110%]") } == true
        }
        XCTAssertTrue(shown, "the status line shows the levels: \(reporter.statusLines.last ?? "")")
        XCTAssertTrue(reporter.notes.contains("volume: 1 110%, 2 60% muted"), "\(reporter.notes)")
        input.yield(.quit)
        let outcome = await run.value
        XCTAssertEqual(outcome.exitCode, 0)
    }

    /// The commands are typed at once, before the view plays (the stage holds them until start-up is over, then
    /// runs them in order), and the run ends with `q` once their effects show, not at a fixed `--duration`: under
    /// the shards' load (20 window views and 4 seeking HLS views in the other shards) the view once took over 6 s to
    /// start, and a 6 s run ended before it played (exit 1, "never started playing"; a 2 s run in session 14).
    func testHelpAndUnknownCommandsOnTheCLI() throws {
        let binary = TestMedia.root.appendingPathComponent(".build/debug/multiview").path
        guard FileManager.default.isExecutableFile(atPath: binary) else { return XCTFail("\(binary) not built") }
        let cli = try InteractiveCLI([binary, "play", "--headless", "--no-audio", TestMedia.angle1])
        defer { cli.kill() }
        for line in ["dance", "help", "volume 1 50", "seek 0:03"] { cli.send(line) }
        let shown = cli.wait(timeout: .seconds(60)) {
            $0.stderr.contains("note: seek 3: done") && $0.lastStatusLine.contains("[vol 50%]")
        }
        XCTAssertTrue(shown, "the seek done and the volume in the status line: \(cli.transcript)")
        cli.send("q")
        XCTAssertEqual(cli.waitForExit(timeout: .seconds(10)), 0, cli.transcript)
        let stderr = cli.stderr
        let lines = stderr.split(separator: "\n").map(String.init)
        let unknown = lines.filter { $0.contains("dance") }
        XCTAssertEqual(unknown, ["error: unknown command 'dance'; type help for the commands"], stderr)
        XCTAssertTrue(lines.contains("note: keys in the window:"), stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("  seek 1:23 ") }, stderr)
        XCTAssertTrue(lines.contains("note: volume: 1 50%"), stderr)
        XCTAssertFalse(stderr.contains("error: seek"), stderr)
    }
}
