import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest
@testable import Multiview

/// One view over playbin3, playing the bundled media through real pipelines (fake sinks, real time).
final class PlayerTests: XCTestCase {
    func testPlaysAndPositionAdvances() async throws {
        let player = try makePlayer()
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        let start = await player.position?.seconds ?? -1
        try await Task.sleep(for: .seconds(1))
        let later = await player.position?.seconds ?? -1
        XCTAssertGreaterThan(later - start, 0.7, "position must advance about 1 s in 1 s of playing")
        XCTAssertLessThan(later - start, 1.3)
        let status = await player.currentStatus
        XCTAssertEqual(status.state, .playing)
        XCTAssertNil(status.waitingToPlay)
        let info = await log.mediaInfo
        XCTAssertEqual(info?.width, 640)
        XCTAssertEqual(info?.height, 360)
        let duration = await player.duration.map { $0.seconds } ?? 0
        XCTAssertEqual(duration, 24, accuracy: 0.2)
        // The state stream went through "waiting to play (loading)" before PLAYING.
        let statuses = await log.statuses
        XCTAssertTrue(statuses.contains { $0.waitingToPlay == .loading }, "\(statuses)")
        XCTAssertEqual(statuses.last?.state, .playing)
    }

    func testPauseHoldsPosition() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        // Paused once it has played a while (its position, not a wall-clock guess of it).
        let played = await eventually(timeout: .seconds(10)) { (await player.position?.seconds ?? 0) > 0.5 }
        let reached = await player.position
        XCTAssertTrue(played, "the position did not pass 0.5 s: \(String(describing: reached))")
        try await player.pause()
        let pausedState = await player.currentStatus.state
        XCTAssertEqual(pausedState, .paused)
        let held = await player.position?.seconds ?? -1
        try await Task.sleep(for: .milliseconds(700))
        let after = await player.position?.seconds ?? -2
        XCTAssertEqual(after, held, accuracy: 1.0 / 30, "a paused view must not move")
        XCTAssertGreaterThan(held, 0.3)
    }

    func testAccurateSeekLandsWithinOneFrame() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.preroll()
        // Record the first video buffer that reaches the sink after the seek.
        let sink = try player.pipeline.get("video-sink", as: Element.self)
        let firstPTS = Mutex<ClockTime?>(nil)
        let armed = Mutex(false)
        let probe = try sink.staticPad("sink").addProbe(.buffer) { info in
            if armed.withLock({ $0 }), let pts = info.pts {
                firstPTS.withLock { if $0 == nil { $0 = pts } }
            }
            return .ok
        }
        defer { _ = probe }
        armed.withLock { $0 = true }
        let target = 12.345
        try await player.seek(to: .seconds(target))
        let position = await player.position?.seconds ?? -1
        XCTAssertEqual(position, target, accuracy: 1.0 / 30, "reported position after an accurate seek")
        let pts = try XCTUnwrap(firstPTS.withLock { $0 }, "no frame rendered after the seek").seconds
        // Accurate seek: the first frame shown is the one covering the target (not the previous keyframe).
        XCTAssertEqual(pts, target, accuracy: 1.0 / 30 + 0.001, "first frame after seek at \(pts)")
        try await player.play()
        try await Task.sleep(for: .milliseconds(300))
        let moved = await player.position?.seconds ?? 0
        XCTAssertGreaterThan(moved, target)
    }

    func testRateTwoAdvancesTwiceAsFast() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        try await player.setRate(2.0)
        let rate = await player.rate
        XCTAssertEqual(rate, 2.0)
        let t0 = ContinuousClock.now
        let p0 = await player.position?.seconds ?? 0
        try await Task.sleep(for: .milliseconds(1500))
        let p1 = await player.position?.seconds ?? 0
        let wallSeconds = (ContinuousClock.now - t0).inSeconds
        let ratio = (p1 - p0) / wallSeconds
        XCTAssertEqual(ratio, 2.0, accuracy: 0.4, "media advanced \(p1 - p0) s in \(wallSeconds) s")
    }

    func testEndOfStreamIsReported() async throws {
        let player = try makePlayer()
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.preroll()
        try await player.seek(to: .seconds(22.5))
        try await player.play()
        let ended = await eventually(timeout: .seconds(6)) { await log.sawEndOfStream }
        XCTAssertTrue(ended, "no end-of-stream 1.5 s before the end")
        let reachedEnd = await player.reachedEnd
        XCTAssertTrue(reachedEnd)
        let failure = await log.failure
        XCTAssertNil(failure)
    }

    func testMissingFileIsATypedErrorNamingTheView() async throws {
        let player = try makePlayer(3, name: "missing.mp4")
        do {
            try await player.load(MediaSource("/nonexistent/missing.mp4"))
            XCTFail("loading a missing file must throw")
        } catch let error as PlayerError {
            XCTAssertEqual(error.cause, .fileNotFound(path: "/nonexistent/missing.mp4"))
            XCTAssertEqual(error.view.number, 3)
            XCTAssertTrue(error.description.hasPrefix("view 3 (missing.mp4): file not found"), error.description)
        }
    }

    func testTruncatedFileIsReported() async throws {
        let path = try TestMedia.truncatedCopy(of: "angle1-wide.mp4")
        let player = try makePlayer(2, name: "truncated.mp4")
        let log = await EventLog(player)
        try await player.load(MediaSource(path))
        try await player.play()
        // Skip ahead to the cut so the test does not wait for real-time playback to reach it.
        try? await player.seek(to: .seconds(6))
        let failed = await eventually(timeout: .seconds(15)) { await log.failure != nil }
        XCTAssertTrue(failed, "a truncated file must fail, not end quietly")
        let maybeFailure = await log.failure
        let failure = try XCTUnwrap(maybeFailure)
        guard case .truncatedMedia(let end, let duration) = failure.cause else {
            return XCTFail("expected truncatedMedia, got \(failure.cause)")
        }
        XCTAssertLessThan(end.seconds, 20)
        XCTAssertEqual(duration.seconds, 24, accuracy: 0.2)
        XCTAssertTrue(failure.description.hasPrefix("view 2 (truncated.mp4): truncated media"), failure.description)
    }

    func testCorruptFileIsATypedError() async throws {
        let path = try TestMedia.garbageFile()
        let player = try makePlayer(4, name: "garbage.mp4")
        try await player.load(MediaSource(path))
        do {
            try await player.play()
            XCTFail("random bytes must not play")
        } catch let error as PlayerError {
            guard case .corruptMedia = error.cause else { return XCTFail("expected corruptMedia, got \(error.cause)") }
            XCTAssertNotNil(error.underlying, "the GStreamer error behind it is kept")
            XCTAssertTrue(error.description.hasPrefix("view 4 (garbage.mp4): corrupt"), error.description)
        }
        let stoppedState = await player.currentStatus.state
        XCTAssertEqual(stoppedState, .stopped)
    }

    func testFileWithNoDecodableStreamIsATypedError() async throws {
        let path = try TestMedia.undecodableCopy()
        let player = try makePlayer(5, name: "undecodable.mkv")
        let log = await EventLog(player)
        try await player.load(MediaSource(path))
        // The failure may surface while starting (play throws) or just after: either way it is an event.
        try? await player.play()
        let failed = await eventually(timeout: .seconds(5)) { await log.failure != nil }
        XCTAssertTrue(failed, "a file with no decodable stream must fail")
        let maybeFailure = await log.failure
        let error = try XCTUnwrap(maybeFailure)
        print("[undecodable] failed from \(error.underlying.map { "the bus error \($0)" } ?? "the streams' missing decoders")")
        guard case .noDecodableStream(let detail) = error.cause else {
            return XCTFail("expected noDecodableStream, got \(error.cause)")
        }
        XCTAssertTrue(detail.contains("x-unknown"), detail)
        XCTAssertTrue(error.description.hasPrefix("view 5 (undecodable.mkv): no decodable stream"), error.description)
    }

    func testEveryBundledFilePlays() async throws {
        let manifest = try TestMedia.manifest()
        XCTAssertGreaterThanOrEqual(manifest.files.count, 5)
        for (index, entry) in manifest.files.enumerated() {
            let player = try makePlayer(index + 1, name: entry.file)
            let log = await EventLog(player)
            try await player.load(MediaSource(TestMedia.path(entry.file)))
            try await player.play()
            let gotInfo = await eventually(timeout: .seconds(5)) { await log.mediaInfo != nil }
            XCTAssertTrue(gotInfo, entry.file)
            let info = await log.mediaInfo
            XCTAssertEqual(info?.width, entry.width, entry.file)
            XCTAssertEqual(info?.height, entry.height, entry.file)
            let duration = await player.duration?.seconds ?? 0
            XCTAssertEqual(duration, entry.duration_s, accuracy: 0.2, entry.file)
            await player.stop()
        }
    }

    func testReleasedPlayerFreesItsPipeline() async throws {
        let weak: WeakObjectReference
        do {
            let player = try makePlayer()
            weak = player.pipeline.weakReference()
            try await player.load(MediaSource(TestMedia.angle1))
            try await player.play()
            try await Task.sleep(for: .milliseconds(300))
            await player.stop()
        }
        let freed = await eventually(timeout: .seconds(5)) { !weak.isAlive }
        XCTAssertTrue(freed, "the pipeline outlived its player")
    }
}
