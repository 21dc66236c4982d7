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
/// flush through the input (the restart's), or never; for a coordinated preparation, only at a flush that no seek
/// from the pipeline's sinks caused (as the real stall outlived the preparation's seek).
final class StalledStartTests: XCTestCase {
    private final class InputStall: Sendable {
        /// What the probes (streaming threads) write: the flushes seen, the seeks that came from the pipeline's
        /// sinks through decodebin3 (their sequence numbers) and the probes kept.
        private final class Inputs: Sendable {
            let flushes = Mutex<Int>(0)
            let sinkSeeks = Mutex<Set<UInt32>>([])
            let probes = Mutex<[PadProbe]>([])
        }
        private final class Flag: Sendable { let raised = Mutex(false) }
        private let inputs = Inputs()
        private let connection: SignalConnection

        /// `curedBySinkSeeks` false: the flush of a seek from the pipeline's sinks (one that decodebin3 passed
        /// upstream) does not end the drop, as the preparation's seek did not bring the by-ear control's stalled
        /// first view its preroll in 20 s; only a seek sent into the source bin itself (the restart's) does.
        /// `videoOnly`: only the video input stalls (the audio sink prerolls), as in that view: its preroll
        /// timed out with "no first buffer yet at videosink".
        /// `answeringFlushing`: a stalled buffer's push is answered FLUSHING (the real stall's answer: the demuxer
        /// that pushed it pauses its loop) instead of being dropped as if taken.
        init(_ pipeline: Pipeline, endsAtFlush: Bool, curedBySinkSeeks: Bool = true, videoOnly: Bool = false,
             answeringFlushing: Bool = false) throws {
            connection = try pipeline.connect("deep-element-added") { [inputs] args in
                guard let element = args.element(at: 2), element.factoryName == "identity",
                      args.element(at: 1)?.factoryName == "decodebin3",
                      let pad = try? element.staticPad("sink") else { return }
                let flushed = Flag()
                let probe = pad.addProbe([.buffer, .eventDownstream, .eventFlush, .eventUpstream]) { info in
                    if info.eventName == "seek" {
                        // Going upstream out of decodebin3's input: a seek from the pipeline's sinks.
                        if !curedBySinkSeeks, let seqnum = info.eventSeqnum {
                            inputs.sinkSeeks.withLock { _ = $0.insert(seqnum) }
                        }
                        return .ok
                    }
                    if info.eventName == "flush-stop" {
                        inputs.flushes.withLock { $0 += 1 }
                        let seqnum = info.eventSeqnum ?? 0
                        let fromSinks = inputs.sinkSeeks.withLock { $0.contains(seqnum) }
                        if endsAtFlush && !fromSinks { flushed.raised.withLock { $0 = true } }
                    }
                    if flushed.raised.withLock({ $0 }) { return .ok }
                    if videoOnly && !(pad.currentCaps?.structure()?.name.hasPrefix("video/") ?? false) { return .ok }
                    if info.eventName == nil { return answeringFlushing ? .flushing : .drop }
                    return info.eventName == "eos" ? .drop : .ok
                }
                inputs.probes.withLock { $0.append(probe) }
            }
        }

        var flushes: Int { inputs.flushes.withLock { $0 } }
    }

    private func warnings(_ log: EventLog) async -> [String] {
        await log.events.compactMap { if case .warning(let w) = $0 { w } else { nil } }
    }

    /// Plays angle1 through a stall that ends at the restart's flush; asserts it was begun again exactly once.
    /// Returns the player, its log, the stall, how long `play` took and the warnings said.
    private func playStalled(answeringFlushing: Bool, file: StaticString = #filePath, line: UInt = #line) async throws
        -> (Player, EventLog, InputStall, Duration, [String]) {
        let player = try makePlayer(1, name: "angle1")
        let log = await EventLog(player)
        let stall = try InputStall(player.pipeline, endsAtFlush: true, answeringFlushing: answeringFlushing)
        try await player.load(MediaSource(TestMedia.angle1))
        let began = ContinuousClock.now
        try await player.play()
        let took = ContinuousClock.now - began
        let said = await warnings(log)
        XCTAssertEqual(said.filter { $0.contains("starting it again") }.count, 1, "warnings: \(said)", file: file, line: line)
        return (player, log, stall, took, said)
    }

    /// The stall as GStreamer 1.22 makes it: the first pushes into decodebin3 answered FLUSHING, the demuxer's
    /// loop paused on that. Seen by its stopped loop, the start is begun again about a second later, not after
    /// `StartStall.limit` (a short run, such as a 2.5 s headless stage, then still plays every view).
    func testAStartWhoseDemuxerStoppedOnAFlushingPushIsBegunAgainWithinSeconds() async throws {
        let (player, log, stall, took, said) = try await playStalled(answeringFlushing: true)
        XCTAssertTrue(said.first?.hasPrefix("view 1 (angle1): its streaming task") ?? false, "\(said)")
        XCTAssertTrue(said.first?.contains("stopped and nothing came out of the media within 1") ?? false, "\(said)")
        XCTAssertGreaterThanOrEqual(took, StartStall.stoppedTaskLimit, "begun again before the task had stayed stopped")
        XCTAssertLessThan(took, StartStall.limit, "begun again only after the slow limit: \(took)")
        XCTAssertGreaterThan(stall.flushes, 0, "the restart flushed decodebin3's inputs")
        let first = await player.position?.seconds ?? -1
        try await Task.sleep(for: .seconds(1))
        let later = await player.position?.seconds ?? -1
        XCTAssertGreaterThan(later - first, 0.5, "the restarted view plays")
        let failure = await log.failure
        XCTAssertNil(failure)
        print("stopped-loop stall, begun again after \(took): \(said)")
        await player.stop()
    }

    /// Data that vanishes at decodebin3's inputs (dropped as if taken): the start is begun again once, by whichever
    /// sign comes first (the demuxer's loop paused at the file's end, or nothing at the sinks after 5 s).
    func testAStalledFirstStartIsBegunAgainOnceAndPlays() async throws {
        let (player, log, stall, took, said) = try await playStalled(answeringFlushing: false)
        XCTAssertTrue(said.first?.hasPrefix("view 1 (angle1): ") ?? false, "\(said)")
        XCTAssertTrue(said.first?.contains("(a GStreamer start-up stall)") ?? false, "\(said)")
        XCTAssertGreaterThanOrEqual(took, StartStall.stoppedTaskLimit, "the start was begun again before any sign")
        XCTAssertGreaterThan(stall.flushes, 0, "the restart flushed decodebin3's inputs")
        print("vanishing-data stall, begun again after \(took): \(said)")

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

    /// A coordinated preparation is a view's first start too: its PAUSED gives up after 2 s and its seek follows.
    /// When that start stalled and the seek does not cure the stall, the start is begun again at the preparation's
    /// target, and the view is prepared there (before: the preparation timed out, or failed at once with its seek
    /// refused).
    func testAStalledFirstCoordinatedPreparationIsBegunAgainAtItsTarget() async throws {
        let player = try makePlayer(1, name: "angle1")
        let log = await EventLog(player)
        let stall = try InputStall(player.pipeline, endsAtFlush: true, curedBySinkSeeks: false, videoOnly: true)
        try await player.load(MediaSource(TestMedia.angle1))
        let began = ContinuousClock.now
        do {
            try await player.prepareCoordinated(at: .seconds(3), rate: 1, timeout: .seconds(12))
        } catch {
            let said = await warnings(log)
            return XCTFail("the preparation failed after \(ContinuousClock.now - began): \(error); warnings \(said)")
        }
        let said = await warnings(log)
        XCTAssertEqual(said.filter { $0.contains("starting it again") }.count, 1, "warnings: \(said)")
        // Whether the seek could reach the stalled stream's sink depends on how far its start got: refused at
        // once (no video output yet), or taken and not prerolled within 5 s. Either way the start is begun again.
        XCTAssertTrue(said.first?.hasPrefix("view 1 (angle1): ") ?? false, "\(said)")
        XCTAssertTrue(said.first?.contains("(a GStreamer start-up stall)") ?? false, "\(said)")
        print("stalled preparation, begun again after \(ContinuousClock.now - began): \(said)")
        XCTAssertGreaterThan(stall.flushes, 0, "the restart flushed decodebin3's inputs")
        let status = await player.currentStatus
        XCTAssertEqual(status.state, .paused)
        XCTAssertEqual(status.waitingToPlay, .waitingForCoordinatedPlayback)
        let position = await player.position
        XCTAssertEqual(try XCTUnwrap(position).seconds, 3, accuracy: 0.1, "prepared somewhere else")
        let failure = await log.failure
        XCTAssertNil(failure)
        await player.stop()
    }
}
