import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest
@testable import Routing

/// Issue 15's stalled streams: libpulse sometimes wraps a playback stream's time (hundreds of years ahead) at a
/// resume, and from then on that stream's writes blocked 1.1, 2.2, then 4.2 s after each later pause and resume,
/// freezing its view. The player replaces such a stream with a new one at the view's position the moment its
/// clock guard refuses the first wrapped reading.
///
/// libpulse's wrap is a race (about one stream in three per minute of seeks and pauses here), so the test makes it
/// happen: `injectAudioStreamTimeJump` reports the stream's readings 100 years ahead, as the wrap does, through
/// the guard's own reading path. Real pipeline, the test's own PulseAudio daemon (`PulseKillFixture`).
final class StreamTimeWrapTests: XCTestCase {
    func testAStreamWhoseTimeWrapsIsReplacedAndTheViewPlaysOn() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let client = try await PulseAudioClient.connect(applicationName: "multiview-tests", server: fixture.daemon.server)
            let (player, log) = try await fixture.playingView(file: "angle1-wide.mp4")
            let replaced = ReplacementLog()
            let events = await player.events()
            let reader = Task { for await e in events { if case .audioStreamReplaced(let r) = e { await replaced.add(r) } } }
            defer { reader.cancel() }

            let streams: @Sendable () async -> [UInt32] = { ((try? await client.sinkInputs()) ?? []).map(\.index) }
            let streaming = await eventually(timeout: .seconds(15)) {
                let position = await player.position?.seconds ?? 0, count = await streams().count
                return position > 0.5 && count == 1
            }
            let streamsBefore = await streams()
            let startStatuses = await log.values
            XCTAssertTrue(streaming, "the view did not play one stream into the daemon: streams \(streamsBefore), "
                          + "statuses \(startStatuses)")
            let wrapsBefore = await player.audioStreamTimeWraps
            XCTAssertEqual(wrapsBefore, 0, "a stream was replaced before any wrap")

            let injected = await player.injectAudioStreamTimeJump(.seconds(100 * 365 * 86_400))
            XCTAssertTrue(injected, "the view's PulseAudio sink has no clock guard")

            // The follower reads the sink's clock as the audio plays: the first wrapped reading replaces the stream.
            let noticed = await eventually(timeout: .seconds(5)) { await player.audioStreamTimeWraps == 1 }
            XCTAssertTrue(noticed, "the wrapped stream time was not noticed within 5 s")
            let newStream = await eventually(timeout: .seconds(10)) {
                let now = await streams(), state = await player.currentStatus.state
                return now.count == 1 && now != streamsBefore && state == .playing
            }
            let statuses = await log.values, streamsAfter = await streams()
            XCTAssertTrue(newStream, "no single new stream with the view playing: before \(streamsBefore), "
                          + "after \(streamsAfter), statuses \(statuses)")

            // The view plays on, from where it was (not from the start), with its sound; nothing was "lost".
            let position = await player.position?.seconds ?? 0
            XCTAssertGreaterThan(position, 0.5, "the view went back to the start when its stream was replaced")
            let advanced = await eventually(timeout: .seconds(5)) { (await player.position?.seconds ?? 0) > position + 1 }
            XCTAssertTrue(advanced, "the view does not advance on its new stream (at \(position) s)")
            let failure = await player.failure, lost = await player.audioOutputLost
            XCTAssertNil(failure, "the view failed")
            XCTAssertFalse(lost, "the view says its audio output is lost")
            let audioEvents = await fixture.audioEvents.values
            XCTAssertEqual(audioEvents, [], "a replaced stream was announced as lost or back")
            let reasons = await replaced.values
            XCTAssertEqual(reasons.count, 1, "one replacement event expected: \(reasons)")
            XCTAssertTrue(reasons.first?.contains("wrapped") ?? false, "the event does not say why: \(reasons)")
            // The new stream's guard has no injected fault: no second replacement.
            try await Task.sleep(for: .seconds(1))
            let wraps = await player.audioStreamTimeWraps
            XCTAssertEqual(wraps, 1, "the new stream was replaced again")
        }
    }
}

extension StreamTimeWrapTests {
    /// Coordinated, the replacement is an interruption of its own: the view is suspended while its stream is
    /// replaced and caught up with the group when it ends; the other view is not touched.
    func testACoordinatedViewWhoseStreamTimeWrapsRejoinsTheGroup() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let views = try await fixture.playingGroup(["angle1-wide.mp4", "angle4-overhead.mp4"])
            let players = views.map(\.player)

            let injected = await players[1].injectAudioStreamTimeJump(.seconds(100 * 365 * 86_400))
            XCTAssertTrue(injected, "view 2's PulseAudio sink has no clock guard")
            let noticed = await eventually(timeout: .seconds(5)) { await players[1].audioStreamTimeWraps == 1 }
            XCTAssertTrue(noticed, "view 2's wrapped stream time was not noticed within 5 s")

            // Replaced and caught up: both play, together, and the group advances.
            let rejoined = await eventually(timeout: .seconds(10)) {
                guard await allPlaying(players, past: 0) else { return false }
                let p0 = await players[0].position?.seconds ?? 0, p1 = await players[1].position?.seconds ?? 0
                return abs(p0 - p1) < 0.1
            }
            var states: [PlayerStatus] = []
            for p in players { states.append(await p.currentStatus) }
            XCTAssertTrue(rejoined, "view 2 did not rejoin the group after its stream was replaced: \(states)")
            let before = await players[0].position?.seconds ?? 0
            try await Task.sleep(for: .seconds(1.5))
            let after = await players[0].position?.seconds ?? 0
            XCTAssertGreaterThan(after - before, 1.0, "the group does not advance after the replacement")
            let p0 = await players[0].position?.seconds ?? 0, p1 = await players[1].position?.seconds ?? 0
            XCTAssertLessThan(abs(p0 - p1), 0.1, "the views are apart after the replacement: \(p0) / \(p1)")
            let wraps0 = await players[0].audioStreamTimeWraps
            XCTAssertEqual(wraps0, 0, "view 1's stream was replaced too")
            for p in players {
                let failure = await p.failure
                XCTAssertNil(failure, "a view failed")
            }
        }
    }
}

extension StreamTimeWrapTests {
    /// A coordinated view suspended for a reason of its own and playing locally (as "what happened?" plays it at
    /// 2×) keeps playing through a replacement of its stream: the interruption's end catches nothing up while that
    /// suspension lasts, and the view stayed PAUSED (a member's "what happened?" never ended: MemberProcessTests,
    /// repeat run 1 on 2f9ec53). When the suspension ends, the view rejoins the group.
    func testAViewSuspendedForAnotherReasonPlaysOnThroughTheReplacement() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let views = try await fixture.playingGroup(["angle1-wide.mp4", "angle4-overhead.mp4"])
            let players = views.map(\.player)

            let suspension = await views[1].coordinator.beginSuspension(for: SuspensionReason("test: own reason"))
            try await players[1].playLocally()
            let injected = await players[1].injectAudioStreamTimeJump(.seconds(100 * 365 * 86_400))
            XCTAssertTrue(injected, "view 2's PulseAudio sink has no clock guard")
            let noticed = await eventually(timeout: .seconds(5)) { await players[1].audioStreamTimeWraps == 1 }
            XCTAssertTrue(noticed, "view 2's wrapped stream time was not noticed within 5 s")
            // The replacement is over once the interruption's suspension has gone; the view's own stays.
            let replaced = await eventually(timeout: .seconds(10)) {
                await views[1].coordinator.suspensionReasons == [SuspensionReason("test: own reason")]
            }
            let reasons = await views[1].coordinator.suspensionReasons
            XCTAssertTrue(replaced, "view 2's suspensions after the replacement: \(reasons)")
            let before = await players[1].position?.seconds ?? 0
            let advanced = await eventually(timeout: .seconds(5)) {
                let state = await players[1].currentStatus.state, position = await players[1].position?.seconds ?? 0
                return state == .playing && position > before + 1
            }
            let status = await players[1].currentStatus
            XCTAssertTrue(advanced, "view 2 does not play on through its replacement (from \(before) s): \(status)")

            try await suspension.end()
            let rejoined = await eventually(timeout: .seconds(10)) {
                let s0 = await players[0].currentStatus.state, s1 = await players[1].currentStatus.state
                let p0 = await players[0].position?.seconds ?? 0, p1 = await players[1].position?.seconds ?? 0
                return s0 == .playing && s1 == .playing && abs(p0 - p1) < 0.1
            }
            XCTAssertTrue(rejoined, "view 2 did not rejoin the group when its suspension ended")
        }
    }
}

/// Reasons of the `audioStreamReplaced` events a player published, in order.
private actor ReplacementLog {
    private(set) var values: [String] = []
    func add(_ value: String) { values.append(value) }
}
