import Foundation
import GStreamer
import Multiview
import TestSupport
import TrickPlay
import XCTest

/// `ff N` / `rew N` / `preview N T PATH` on a headless stage playing an HLS view over the real server.
final class StageTrickPlayTests: XCTestCase {
    final class Reporter: StageReporter, @unchecked Sendable {
        // Sendable: all access under `lock`.
        private let lock = NSLock()
        private var _notes: [String] = []
        func status(_ line: String) {}
        func note(_ line: String) { lock.withLock { _notes.append(line) } }
        var notes: [String] { lock.withLock { _notes } }
    }

    func testCommandParsing() {
        XCTAssertEqual(StageCommand.parse("ff 2"), .trickPlay(view: 2, rate: 8))
        XCTAssertEqual(StageCommand.parse("rew 1"), .trickPlay(view: 1, rate: -8))
        XCTAssertEqual(StageCommand.parse("preview 1 7.5 /tmp/p.png"), .preview(view: 1, seconds: 7.5, path: "/tmp/p.png"))
        XCTAssertNil(StageCommand.parse("ff x"))
        XCTAssertNil(StageCommand.parse("preview 1 -3 /tmp/p.png"))
    }

    /// ff 1 at 8× for ~1 s from ~2 s, then `play`: the view resumes at 1× near where trick play stopped
    /// (≈ 10 s, far from the ≈ 3 s it would be at without trick play); a preview is written; a local file view
    /// answers `ff` with one note and keeps playing.
    func testFastForwardThenPlayResumesWhereTrickPlayStopped() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let previewPath = FileManager.default.temporaryDirectory.appendingPathComponent("stage-preview-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: previewPath) }
        var configuration = StageConfiguration(
            sources: [MediaSource(server.uri("angle1/master.m3u8")),
                      MediaSource(repoRoot.appendingPathComponent("Media/angle4-overhead.mp4").path)],
            headless: true, duration: 40, audio: .fakeSink)   // a cap only: the test quits once it has measured
        let reporter = Reporter()
        let trickPlay = TrickPlayStage(note: { reporter.note($0) })
        configuration.trickPlay = trickPlay
        let stage = Stage(configuration: configuration, reporter: reporter)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let measured = Task { () -> (Bool, Double?, Double?, Double?, Double?) in
            // Both views playing, view 1 (HLS) 2 s in: trick play starts from there.
            let ready = await eventually(timeout: .seconds(20)) {
                let players = await stage.currentPlayers
                guard players.count == 2 else { return false }
                for player in players where (await player.position?.seconds ?? 0) < 2 { return false }
                return true
            }
            let otherAtCommand = await stage.currentPlayers.last?.position
            input.yield(.preview(view: 1, seconds: 7, path: previewPath))
            input.yield(.trickPlay(view: 2, rate: 8))
            input.yield(.trickPlay(view: 1, rate: 8))
            // ≈1 s of trick play from its start (its note): the playlists' load before it took 0.55 s of a fixed
            // 1 s wait under the shards' load (repeat run 1 on e67ca27: 3.6 s of media instead of ≈8).
            _ = await eventually(timeout: .seconds(10)) {
                reporter.notes.contains { $0.hasPrefix("view 1: trick play ff 8x from ") }
            }
            try? await Task.sleep(for: .milliseconds(1000))
            input.yield(.play)
            try? await Task.sleep(for: .seconds(2))
            let player = await stage.currentPlayers.first
            let position = await player?.position
            let other = await stage.currentPlayers.last?.position
            // 3 s later: playing at 1× (an HLS view may still have been refilling after its seek at 2 s).
            try? await Task.sleep(for: .seconds(3))
            let later = await player?.position
            input.yield(.quit)
            return (ready, position?.seconds, other?.seconds, later?.seconds, otherAtCommand?.seconds)
        }
        let outcome = await stage.run(commands: commands)
        input.finish()
        let (ready, position, other, later, otherAtCommand) = await measured.value
        let notes = reporter.notes

        XCTAssertTrue(ready, "the two views were not both playing 2 s in within 20 s")
        XCTAssertEqual(outcome.failures.map(\.description), [])
        let start = try XCTUnwrap(notes.first { $0.hasPrefix("view 1: trick play ff 8x from ") }, "\(notes)")
        let from = Double(start.dropFirst("view 1: trick play ff 8x from ".count).split(separator: " ")[0]) ?? -1
        let ended = try XCTUnwrap(notes.first { $0.hasPrefix("view 1: trick play ended at ") }, "\(notes)")
        let stoppedAt = Double(ended.dropFirst("view 1: trick play ended at ".count).split(separator: " ")[0]) ?? -1
        XCTAssertEqual(stoppedAt - from, 8, accuracy: 3, "≈1 s at 8×: \(notes)")
        let shown = trickPlay.shown.times(ofView: 1)
        XCTAssertGreaterThanOrEqual(shown.count, 3, "I-frames shown: \(shown)")
        XCTAssertEqual(shown, shown.sorted(), "forward order")
        // After `play` + 2 s: from the trick-play position (stoppedAt, up to 2 s of 1× playing; not the ~5 s it
        // had before trick play), and 3 s later it has moved on at 1× (refilling the HLS buffer after the seek
        // may take a moment on a loaded machine, so the first 2 s are not required to be all playing).
        let resumed = try XCTUnwrap(position, "no position for view 1")
        XCTAssertGreaterThanOrEqual(resumed, stoppedAt - 0.5, "resumed from the trick-play position; notes: \(notes)")
        XCTAssertLessThanOrEqual(resumed, stoppedAt + 3.5, "resumed from the trick-play position; notes: \(notes)")
        let moved = try XCTUnwrap(later, "no later position for view 1") - resumed
        XCTAssertEqual(moved, 3, accuracy: 1.5, "playing at 1× after trick play; notes: \(notes)")
        // The file view: one note, it kept playing (≈ 3 s on from where it was at the `ff`: 1 s + 2 s).
        XCTAssertTrue(notes.contains { $0.hasPrefix("view 2: trick play needs an HLS master playlist") }, "\(notes)")
        let otherPosition = try XCTUnwrap(other, "no position for view 2")
        let otherBefore = try XCTUnwrap(otherAtCommand, "no position for view 2 at the ff")
        XCTAssertEqual(otherPosition - otherBefore, 3, accuracy: 2, "view 2 from \(otherBefore) s to \(otherPosition) s")
        XCTAssertTrue(notes.contains { $0.hasPrefix("view 1: preview at 7.0 s -> \(previewPath) (640x360)") }, "\(notes)")
        let png = try decodePNG(atPath: previewPath)
        XCTAssertEqual([png.width, png.height], [640, 360])
    }
}
