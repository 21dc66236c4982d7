import Coordination
import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15's soak: after PulseAudio came back, the HLS views' new streams were first started 12 s later with
/// libpulse saying 6.6 s for streams that had never been uncorked, and at every later pause their time ran on
/// (2.3 s, 3.2 s). Calibrated on that, each pulsesink wrote its samples seconds ahead of what the server played,
/// waited that long for free space in its stream, and the view's video starved behind the full audio queue
/// (4 HLS views frozen at 0:05.3 for 10-15 s in every soak run with the PulseAudio restart).
///
/// libpulse's fault cannot be ordered, so the test makes it: `injectAudioStreamTimeJump` reports view 2's stream
/// time 4 s ahead through its clock guard's reading path, before the stream has ever played, and keeps doing so
/// (libpulse then ran on with real time, 4 s ahead). Real pipelines, the test's own PulseAudio daemon
/// (`PulseKillFixture`); what the server holds of each stream is read with `pactl`.
final class StreamTimeRanWhileCorkedTests: XCTestCase {
    func testAFreshStreamWhoseTimeRanAheadBeforeItsFirstStartPlaysWithTheGroup() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let views = try await fixture.coordinatedViews(["angle1-wide.mp4", "angle4-overhead.mp4"])
            let players = views.map(\.player)
            let injected = await players[1].injectAudioStreamTimeJump(.seconds(4))
            XCTAssertTrue(injected, "view 2's PulseAudio sink has no clock guard")
            try await players[0].play()   // the group's play
            let started = await eventually(timeout: .seconds(15)) { await allPlaying(players, past: 0.5) }
            let startStates = await Self.states(players)
            XCTAssertTrue(started, "the group did not start: \(startStates)")

            // Longer than the 4 s excess and its absorption limit: the follower sees the stream's readings again.
            var deepest: Duration = .zero, samples: [String] = [], measured = 0
            let before = await players[1].position?.seconds ?? 0
            for _ in 0..<16 {
                try await Task.sleep(for: .milliseconds(500))
                let queued = Self.queuedAudio(named: "angle4-overhead.mp4")
                deepest = max(deepest, queued ?? .zero)
                if queued != nil { measured += 1 }
                let state = await players[1].currentStatus.state
                samples.append("\(queued.map { "\($0)" } ?? "-") \(state)")
            }
            let after = await players[1].position?.seconds ?? 0

            XCTAssertGreaterThanOrEqual(measured, 12, "the server did not show view 2's stream: \(samples)")
            XCTAssertLessThan(deepest, .seconds(1), "view 2's stream held its samples seconds ahead of what the server "
                              + "played (its writes blocked): server queue and state every 0.5 s \(samples)")
            XCTAssertGreaterThan(after - before, 6.5, "view 2 advanced \(after - before) s in 8 s: \(samples)")
            let p0 = await players[0].position?.seconds ?? 0, p1 = await players[1].position?.seconds ?? 0
            XCTAssertLessThan(abs(p0 - p1), 0.1, "the views are apart: \(p0) / \(p1)")
            let refusals = await players[1].audio.clockGuard?.stoppedTimeRefusals.count ?? 0
            XCTAssertGreaterThanOrEqual(refusals, 1, "view 2's guard never refused the time that ran ahead")
            // The server may begin the new stream a few tenths of a second late (the follower's to correct, as on
            // any stream), never 4 s: the whole excess taken for a stall moved the playout by it.
            let follower = await players[1].audioClockStatistics
            let last = follower?.lastCorrection ?? .seconds(99)
            let moved = last < .zero ? .zero - last : last
            XCTAssertLessThan(moved, .seconds(1), "view 2's follower moved its playout by the excess: \(String(describing: follower))")
            for p in players {
                let failure = await p.failure
                XCTAssertNil(failure, "a view failed")
            }
        }
    }

    /// How much audio the server holds for the stream named `mediaName` (`pactl`'s buffer latency: what was
    /// written and not yet played), nil when there is no such stream.
    private static func queuedAudio(named mediaName: String) -> Duration? {
        guard let listing = try? runTool(["pactl", "list", "sink-inputs"]).output else { return nil }
        for block in listing.components(separatedBy: "Sink Input #").dropFirst()
        where block.contains("media.name = \"\(mediaName)\"") {
            guard let line = block.split(separator: "\n").first(where: { $0.contains("Buffer Latency:") }),
                  let usec = line.split(separator: " ").compactMap({ Int($0) }).first else { return nil }
            return .microseconds(usec)
        }
        return nil
    }

    private static func states(_ players: [Player]) async -> [PlayerStatus] {
        var states: [PlayerStatus] = []
        for p in players { states.append(await p.currentStatus) }
        return states
    }
}
