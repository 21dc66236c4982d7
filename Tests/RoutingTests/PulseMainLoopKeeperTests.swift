import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// GStreamer's PulseAudio main loop outlives every sink the player takes to NULL, through a daemon's death and
/// return (`PulseMainLoopKeeper`). The loop runs one thread named "threaded-ml"; pulsesink starts a new one each
/// time its count of sinks at READY climbs from 0, so a loop that was freed and made again shows as a new thread
/// id. Real pulsesinks, the test's own daemon (`PulseKillFixture`), the outage poll's real probe.
final class PulseMainLoopKeeperTests: XCTestCase {
    func testTheMainLoopSurvivesProbeSinksAndADaemonKillAndRestart() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            XCTAssertTrue(PulseMainLoopKeeper.ensure(), "the keeper reaches READY while a daemon answers")
            XCTAssertTrue(PulseMainLoopKeeper.isHolding)
            let loops = Self.mainLoopThreads()
            // Routing's own PulseAudio connections name their loops' threads "mv-pulse-ctl".
            XCTAssertEqual(loops.count, 1, "pulsesink's one main loop thread runs (threads \(loops))")

            // The outage poll's probe: a pulsesink to READY and back to NULL, with no other view open.
            for _ in 0..<3 { XCTAssertTrue(AudioOutput.pulseAudioTakesStreams(device: nil)) }
            XCTAssertEqual(Self.mainLoopThreads(), loops, "probe sinks going to NULL leave the loop running")

            fixture.daemon.stop()   // SIGKILL
            let refused = await eventually(timeout: .seconds(5)) { !AudioOutput.pulseAudioTakesStreams(device: nil) }
            XCTAssertTrue(refused, "with the daemon dead, the probe says no stream can be made")
            XCTAssertEqual(Self.mainLoopThreads(), loops, "the loop outlives the daemon")

            try await fixture.daemon.start()
            let back = await eventually(timeout: .seconds(10)) { AudioOutput.pulseAudioTakesStreams(device: nil) }
            XCTAssertTrue(back, "the probe sees the restarted daemon take streams")
            XCTAssertEqual(Self.mainLoopThreads(), loops, "the same loop serves the restarted daemon")
            XCTAssertTrue(PulseMainLoopKeeper.ensure(), "the keeper still holds the loop")
        }
    }

    /// The ids of this process's threads named "threaded-ml" (libpulse's threaded main loop).
    private static func mainLoopThreads() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.filter { id in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
            return name.trimmingCharacters(in: .whitespacesAndNewlines) == "threaded-ml"
        })
    }
}
