import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest
@testable import Multiview

/// A headless view drops a frame that reaches its sink more than 20 ms after its time, as GStreamer's video sinks
/// do (`max-lateness`), instead of showing it late. The headless fakesink showed every late frame: a view whose
/// decoding fell behind (2× rate on two loaded cores) rendered frames up to 300 ms after their time, each one a
/// frame of skew against the other views (GroupTransportTests once: p99 146 ms, max 302 ms after a rate change).
/// Here the lateness is made on purpose: the render thread is held 300 ms once, so the frames behind it arrive late.
final class LateFrameTests: XCTestCase {
    func testFramesReachingTheSinkLateAreDroppedNotShownLate() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        let sink = try XCTUnwrap(player.videoSink())
        try sink.set("signal-handoffs", true)
        // An uncoordinated view runs on the system clock (`Player.load`): the clock its sink waits on.
        let clock = Clock.systemClock()
        let shown = Mutex<[(pts: Int64, at: Int64)]>([])
        let handoff = try sink.connect("handoff") { args in
            let now = clock.time
            guard let pts = args.bufferTimestamp(at: 1) else { return }
            shown.withLock { $0.append((Int64(pts.nanoseconds), Int64(now.nanoseconds))) }
        }
        let holdNext = Mutex(false)
        let hold = try sink.staticPad("sink").addProbe(.buffer) { _ in
            if holdNext.withLock({ hold in defer { hold = false }; return hold }) { Thread.sleep(forTimeInterval: 0.3) }
            return .ok
        }
        try await player.play()
        let started = await eventually(timeout: .seconds(20)) { shown.withLock { $0.count } >= 30 }
        XCTAssertTrue(started, "30 frames shown before the hold")
        let heldAt = Int64(clock.time.nanoseconds)
        holdNext.withLock { $0 = true }
        let playedOn = await eventually(timeout: .seconds(20)) {
            shown.withLock { frames in frames.filter { $0.at > heldAt + 1_000_000_000 }.count } >= 20
        }
        await player.stop()
        _ = (handoff, hold)

        let frames = shown.withLock { $0 }
        XCTAssertTrue(playedOn, "the view plays on after the hold: \(frames.filter { $0.at > heldAt }.count) frames")
        // Each frame's time on the clock is the base time + its PTS (a file played from 0): the earliest frame
        // before the hold gives the base, with the least scheduling delay in it.
        let base = try XCTUnwrap(frames.filter { $0.at < heldAt }.map { $0.at - $0.pts }.min())
        let lateness = frames.filter { $0.at >= heldAt }.map { Double($0.at - $0.pts - base) / 1e6 }
        let worst = lateness.max() ?? 0
        print(String(format: "after the 300 ms hold: %d frames shown, latest %.1f ms after its time", lateness.count, worst))
        XCTAssertLessThan(worst, 40, "a frame shown \(worst) ms after its time: late frames are dropped (max-lateness 20 ms)")
    }
}
