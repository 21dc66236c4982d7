import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15 row 12: a view made from the first 20 kB of an mp4 fails ("truncated media") and the player takes its
/// pipeline to NULL. In about one run in seven, GStreamer 1.22.0's decodebin3 then crashed the process
/// (`reset_input` → `remove_input_stream(NULL)`): one stream of the file had reached its end before any data
/// of the other passed decodebin3, decodebin3 dropped the ended stream, and its reset looked it up again. The
/// crash is intermittent, so the load → error → stop cycle runs many times here, a few views at once (cheap:
/// each view plays 0.28 s of media).
final class FailedViewTeardownTests: XCTestCase {
    /// The row's file: the first 20 kB of a bundled mp4 (headers and a few frames of video, no audio data).
    private func first20kB(of file: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestMedia.path(file)))
        let out = try TestMedia.scratch().appendingPathComponent("first20k-" + file)
        try data.prefix(20_000).write(to: out)
        return out.path
    }

    func testStoppingFailedTruncatedViewsNeverCrashes() async throws {
        let path = try first20kB(of: "angle4-overhead.mp4")
        let rounds = 8, viewsPerRound = 4
        var failures = 0
        for round in 0..<rounds {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for v in 0..<viewsPerRound {
                    group.addTask {
                        let player = try makePlayer(round * viewsPerRound + v + 1, name: "truncated.mp4")
                        let log = await EventLog(player)
                        try await player.load(MediaSource(path))
                        try? await player.play()
                        let failed = await eventually(timeout: .seconds(15)) { await log.failure != nil }
                        await player.stop()
                        guard failed, case .truncatedMedia = await log.failure?.cause else { return false }
                        return true
                    }
                }
                for try await failedAsTruncated in group where failedAsTruncated { failures += 1 }
            }
        }
        // Reaching this line is the point (the crash ended the whole test process); each view also said why.
        XCTAssertEqual(failures, rounds * viewsPerRound, "every truncated view fails with truncatedMedia")
    }

    /// Soak finding (c): GStreamer 1.22.0's decodebin3 reset leaves its old input elements (one identity per
    /// stream) in the bin, and every reload of a view (an HLS view reconnecting) added more, which each start
    /// then brought up again. After five reloads the pipeline must hold as many elements as after the first.
    func testReloadingAViewLeavesNoElementsBehind() async throws {
        let player = try makePlayer(1, name: "angle1")
        var counts: [Int] = []
        for _ in 0..<5 {
            try await player.load(MediaSource(TestMedia.angle1))
            try await player.preroll()
            counts.append(player.pipeline.descendants { _ in true }.count)
        }
        await player.stop()
        XCTAssertEqual(Set(counts).count, 1, "elements after each preroll: \(counts)")
    }
}
