import Coordination
import Foundation
import GStreamer
// Reaches the HLS view's audio sink (its pipeline), an internal of Multiview.
@testable import Multiview
import Synchronization
import TestSupport
import XCTest

/// Issue 15, the soak's frozen HLS views: after a PulseAudio restart, a seek left PulseAudio reading nothing from
/// the HLS views' streams; each view's audio branch filled, adaptivedemux2's one output thread blocked on it, and the
/// picture starved behind a full buffer (BUFFERING 0 %, a `stallRecovery` suspension) until the next group command's
/// catch-up, 10-15 s later. Such a stall inside the pipeline must end by itself: after
/// `PlayerCoordination.pipelineStallLimit` the view is caught up to the group's time, whose flushing seek clears
/// the block, and it plays with the group again (at the group's position).
///
/// Here the HLS view's audio sink holds every buffer until a flush reaches it (what PulseAudio's stopped reading
/// did to the pulsesink); a local view plays beside it. Before the rule the view stayed suspended and the sink was
/// never flushed.
final class PipelineStallRejoinTests: XCTestCase {
    func testAViewStarvedBehindABlockedAudioSinkIsCaughtUpAndPlaysAgain() async throws {
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root, rate: "30M")
        defer { server.stop() }
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        try await set.add(Media.angles[0], number: 1, item: "event")
        let hls = try await set.add(server.uri("angle1/master.m3u8"), number: 2, item: "event")
        let log = await hls.player.eventLog(clock: set.medium.clock)
        let coordinatorLog = await hls.coordinator.eventLog(clock: set.medium.clock)
        try await set.playAll()
        let rendering = await set.waitRendering(since: 0, count: 10, timeout: .seconds(20))
        check(rendering, "the group never rendered: \(await set.statuses())")

        let sink = try unwrap(await hls.player.pipeline.descendants { $0.name == "audiosink" }.first,
                              "the HLS view has no audio sink named audiosink")
        let block = SinkBlock(try sink.staticPad("sink"))
        let blockedNs = set.nowNs
        let began = await eventually(timeout: .seconds(20)) {
            coordinatorLog.since(blockedNs).contains { $0.value == .suspensionBegan(.stallRecovery) }
        }
        check(began, "the HLS view did not stall behind its blocked audio sink (\(block)); statuses \(log.statuses(since: blockedNs))")
        let ended = await eventually(timeout: .seconds(20)) {
            coordinatorLog.since(blockedNs).contains { $0.value == .suspensionEnded(.stallRecovery) }
        }
        XCTAssertTrue(ended, "the stall suspension did not end (\(block)); statuses \(log.statuses(since: blockedNs))")
        // The suspension's end catches the view up: its preparation pauses (up to 2 s here, the sink being held),
        // then seeks, and that flush reaches the held sink.
        let released = await eventually(timeout: .seconds(15)) { block.released }
        XCTAssertTrue(released, "no flush reached the blocked audio sink: \(block); statuses \(log.statuses(since: blockedNs)); "
                      + "coordinator \(coordinatorLog.since(blockedNs).map(\.value))")
        let said = log.since(blockedNs).contains {
            if case .notice(let text) = $0.value { return text.contains("a stall inside the pipeline") }
            return false
        }
        XCTAssertTrue(said, "no notice named the stall: \(log.since(blockedNs).map(\.value))")

        let playing = await eventually(timeout: .seconds(20)) {
            let statuses = await set.statuses()
            return statuses.allSatisfy { $0.state == .playing && $0.waitingToPlay == nil }
        }
        check(playing, "the group does not play again: \(await set.statuses())")
        let againNs = set.nowNs
        let renderingAgain = await set.waitRendering(since: againNs, views: [2], count: 10, timeout: .seconds(20))
        check(renderingAgain, "the HLS view renders nothing after its catch-up: \(await set.statuses())")
        // HLS media times are the segments' own, so the two views are compared by position, not frame by frame.
        assertPositions(await set.settledPositions(), near: try unwrap(await set.groupTime()), "after the catch-up")
        await set.tearDown()
    }
}

/// Holds every buffer reaching a pad until a flush-start passes it (or 30 s, so that a failing test ends); then lets
/// everything through. Threading: the buffer probe waits on the streaming thread, the flush probe runs on the
/// seeking thread; the state is Mutex-owned and the wait polls it.
private final class SinkBlock: Sendable, CustomStringConvertible {
    private final class State: Sendable {
        let value = Mutex((blocking: true, released: false, held: 0))
    }
    private let state = State()
    private let probes = Mutex<[PadProbe]>([])

    init(_ pad: Pad) {
        let state = self.state
        let buffers = pad.addProbe(.buffer) { _ in
            let deadline = ContinuousClock.now + .seconds(30)
            state.value.withLock { $0.held += 1 }
            while state.value.withLock({ $0.blocking }), ContinuousClock.now < deadline { usleep(5_000) }
            return .ok
        }
        let flushes = pad.addProbe(.eventFlush) { info in
            if info.eventName == "flush-start" {
                state.value.withLock { if $0.blocking { $0.blocking = false; $0.released = true } }
            }
            return .ok
        }
        probes.withLock { $0 = [buffers, flushes] }
    }

    var released: Bool { state.value.withLock { $0.released } }
    var description: String {
        state.value.withLock { "sink block: \($0.held) buffers held, \($0.released ? "released by a flush" : "never flushed")" }
    }
}
