import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest
@testable import Multiview

/// A local file's first start that stalls (GStreamer 1.22's start-up stall: nothing ever reaches a sink) is begun
/// again once, with a warning; one that stalls again times out as before. The stall is made here by dropping every
/// buffer and the end-of-stream at decodebin3's inputs (the identities it makes per stream), as the real stall
/// stopped them there: then no data reaches playsink and the preroll never completes. The drop ends at the first
/// flush through the input (the restart's), or never.
final class StalledStartTests: XCTestCase {
    private final class InputStall: Sendable {
        /// What the probes (streaming threads) write: the flushes seen and the probes kept.
        private final class Inputs: Sendable {
            let flushes = Mutex<Int>(0)
            let probes = Mutex<[PadProbe]>([])
        }
        private final class Flag: Sendable { let raised = Mutex(false) }
        private let inputs = Inputs()
        private let connection: SignalConnection

        init(_ pipeline: Pipeline, endsAtFlush: Bool) throws {
            connection = try pipeline.connect("deep-element-added") { [inputs] args in
                guard let element = args.element(at: 2), element.factoryName == "identity",
                      args.element(at: 1)?.factoryName == "decodebin3",
                      let pad = try? element.staticPad("sink") else { return }
                let flushed = Flag()
                let probe = pad.addProbe([.buffer, .eventDownstream, .eventFlush]) { info in
                    if info.eventName == "flush-stop" {
                        inputs.flushes.withLock { $0 += 1 }
                        if endsAtFlush { flushed.raised.withLock { $0 = true } }
                    }
                    if flushed.raised.withLock({ $0 }) { return .ok }
                    return info.eventName == nil || info.eventName == "eos" ? .drop : .ok
                }
                inputs.probes.withLock { $0.append(probe) }
            }
        }

        var flushes: Int { inputs.flushes.withLock { $0 } }
    }

    private func warnings(_ log: EventLog) async -> [String] {
        await log.events.compactMap { if case .warning(let w) = $0 { w } else { nil } }
    }

    func testAStalledFirstStartIsBegunAgainOnceAndPlays() async throws {
        let player = try makePlayer(1, name: "angle1")
        let log = await EventLog(player)
        let stall = try InputStall(player.pipeline, endsAtFlush: true)
        try await player.load(MediaSource(TestMedia.angle1))
        let began = ContinuousClock.now
        try await player.play()
        let took = ContinuousClock.now - began
        let said = await warnings(log)
        XCTAssertEqual(said.filter { $0.contains("starting it again") }.count, 1, "warnings: \(said)")
        XCTAssertTrue(said.first?.hasPrefix("view 1 (angle1): nothing came out of the media within 5") ?? false, "\(said)")
        XCTAssertGreaterThanOrEqual(took, StartStall.limit, "the start was begun again only after the stall limit")
        XCTAssertGreaterThan(stall.flushes, 0, "the restart flushed decodebin3's inputs")

        // It plays from the start: frames reach the sinks and the position moves.
        let first = await player.position?.seconds ?? -1
        try await Task.sleep(for: .seconds(1))
        let later = await player.position?.seconds ?? -1
        XCTAssertLessThan(first, 1, "the restarted start begins at the beginning")
        XCTAssertGreaterThan(later - first, 0.5, "the restarted view plays")
        let rendered = await player.renderedMediaTime.latest
        XCTAssertNotNil(rendered, "frames reached the sinks")
        let failure = await log.failure
        XCTAssertNil(failure)
        await player.stop()
    }

    func testAStartThatStallsAgainTimesOutAfterOneRestart() async throws {
        let player = try makePlayer(1, name: "angle1")
        let log = await EventLog(player)
        let stall = try InputStall(player.pipeline, endsAtFlush: false)
        try await player.load(MediaSource(TestMedia.angle1))
        do {
            try await player.play(timeout: .seconds(9))
            XCTFail("a start whose data never arrives cannot succeed")
        } catch let error as PlayerError {
            guard case .timeout = error.cause else { return XCTFail("expected a timeout, got \(error)") }
        }
        let said = await warnings(log)
        XCTAssertEqual(said.filter { $0.contains("starting it again") }.count, 1, "restarted once only: \(said)")
        XCTAssertGreaterThan(stall.flushes, 0, "the one restart flushed decodebin3's inputs")
        await player.stop()

        // A new load may restart its own stalled start again (the one restart is per load).
        try await player.load(MediaSource(TestMedia.angle1))
        _ = try? await player.play(timeout: .seconds(7))
        let again = await warnings(log)
        XCTAssertEqual(again.filter { $0.contains("starting it again") }.count, 2, "\(again)")
        await player.stop()
    }
}
