import Foundation
import HLS
import TestSupport
import TrickPlay
import XCTest

final class TrickPlayerTests: XCTestCase {
    private var server: HLSServer!

    override func setUpWithError() throws {
        try HLSFixture.ensure()
        server = try HLSServer(root: HLSFixture.root)
    }

    override func tearDown() { server?.stop(); server = nil }

    /// Previews come from the smallest rung over real HTTP ranges and a real H.264 decode: t=7 shows the I-frame
    /// at 6 s (identical picture to t=6), t=8 the next one (a different picture).
    func testPreviewDecodesTheIFrameAtOrBefore() async throws {
        let player = TrickPlayer(view: "angle1", master: server.url("angle1/master.m3u8"))
        let at7 = try await player.preview(at: 7)
        let at6 = try await player.preview(at: 6)
        let at8 = try await player.preview(at: 8)
        let again7 = try await player.preview(at: 7.9)
        XCTAssertEqual(at7.width, 640); XCTAssertEqual(at7.height, 360)
        XCTAssertEqual(at7.rgb.count, 640 * 360 * 3)
        XCTAssertEqual(at7, at6, "t=7 s must show the I-frame at 6 s")
        XCTAssertEqual(at7, again7)
        XCTAssertNotEqual(at7, at8, "t=8 s is the next I-frame: the burnt-in timecode differs")
        XCTAssertGreaterThan(Set(at7.rgb).count, 8, "a real picture, not a blank frame")
        let scaled = try await player.preview(at: 7, width: 160, height: 90)
        XCTAssertEqual(scaled.width, 160); XCTAssertEqual(scaled.height, 90)
        let variant = await player.previewVariant
        XCTAssertEqual(variant?.height, 360)
    }

    /// 8× forward: about 1.5 s of wall time moves the clock ~12 s, showing I-frames in increasing 2 s steps.
    func testFastForwardAtEightTimes() async throws {
        let player = TrickPlayer(view: "angle1", master: server.url("angle1/master.m3u8"), viewHeight: 360)
        let log = EventLog()
        try await player.play(rate: 8, from: 2) { event in
            switch event {
            case .frame(let f): log.record(.frame(f.mediaTime))
            case .reachedEnd(let p): log.record(.end(p))
            case .failed(let e): log.record(.failure(e.description))
            }
        }
        try await Task.sleep(for: .milliseconds(1500))
        let stopped = await player.stop()
        let position = try XCTUnwrap(stopped)
        let times = log.frameTimes
        XCTAssertEqual(log.failureLines, [])
        XCTAssertEqual(position, 14, accuracy: 3, "1.5 s at 8× from 2 s ≈ 14 s")
        XCTAssertEqual(times.first, 2)
        XCTAssertGreaterThanOrEqual(times.count, 4, "I-frames shown: \(times)")
        for (a, b) in zip(times, times.dropFirst()) {
            XCTAssertGreaterThan(b, a, "forward order: \(times)")
            XCTAssertEqual((b - a).truncatingRemainder(dividingBy: 2), 0, "I-frame steps are 2 s: \(times)")
        }
        XCTAssertLessThanOrEqual(times.last ?? 0, position)
        let count = times.count
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertEqual(log.frameTimes.count, count, "no frames after stop()")
        let running = await player.isRunning
        XCTAssertFalse(running)
    }

    /// −8× goes backwards likewise and stops at 0 with a reachedEnd.
    func testRewindAtEightTimesReachesTheStart() async throws {
        let player = TrickPlayer(view: "angle1", master: server.url("angle1/master.m3u8"))
        let log = EventLog()
        try await player.play(rate: -8, from: 16) { event in
            switch event {
            case .frame(let f): log.record(.frame(f.mediaTime))
            case .reachedEnd(let p): log.record(.end(p))
            case .failed(let e): log.record(.failure(e.description))
            }
        }
        try await Task.sleep(for: .milliseconds(1000))
        let midway = await player.position
        XCTAssertEqual(try XCTUnwrap(midway), 8, accuracy: 3, "1 s at −8× from 16 s ≈ 8 s")
        let reached = await eventually(timeout: .seconds(5)) { !log.endPositions.isEmpty }
        XCTAssertTrue(reached, "rewind never reached the start")
        XCTAssertEqual(log.endPositions, [0])
        let times = log.frameTimes
        // The clock leaves 16 s at once going backwards, so the first I-frame is the one at or before 16 − ε.
        XCTAssertEqual(times.first ?? 0, 15, accuracy: 1)
        XCTAssertEqual(times.last, 0)
        XCTAssertGreaterThanOrEqual(times.count, 5, "I-frames shown: \(times)")
        for (a, b) in zip(times, times.dropFirst()) {
            XCTAssertLessThan(b, a, "backward order: \(times)")
            XCTAssertEqual((a - b).truncatingRemainder(dividingBy: 2), 0, "I-frame steps are 2 s: \(times)")
        }
        let variant = await player.trickVariant
        XCTAssertEqual(variant?.height, 1080, "no view height given: the largest rung")
        let stopped = await player.stop()
        XCTAssertEqual(stopped, 0)
    }

    /// A missing I-frame playlist is one typed error naming the view and the URL.
    func testMissingIFramePlaylistIsOneClearError() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("trickplay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // angle1's master playlist, served from a root where v360/iframes.m3u8 does not exist (HTTP 404).
        try FileManager.default.copyItem(atPath: "\(HLSFixture.root)/angle1/master.m3u8",
                                         toPath: scratch.appendingPathComponent("master.m3u8").path)
        let broken = try HLSServer(root: scratch.path)
        defer { broken.stop() }
        let player = TrickPlayer(view: "wide", master: broken.url("master.m3u8"))
        do {
            _ = try await player.preview(at: 3)
            XCTFail("a 404 I-frame playlist must throw")
        } catch {
            XCTAssertEqual(error.view, "wide")
            let url = broken.uri("v1080/iframes.m3u8")
            XCTAssertEqual(error.cause, .download(url: url, reason: "HTTP 404"))
            XCTAssertEqual(error.description, "view wide: trick play: cannot download \(url): HTTP 404")
        }
    }
}
