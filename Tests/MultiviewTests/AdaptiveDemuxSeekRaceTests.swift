import Foundation
import TestSupport
import XCTest

/// Issue 15: GStreamer 1.22.0's adaptivedemux2 aborted the whole player after a seek of an HLS view
/// (`download_request_set_uri: assertion failed: (request->in_use == FALSE)`): a download still queued for its
/// helper thread when the seek stopped the stream escaped the cancellation and completed into the restarted stream
/// (see `AdaptiveDemuxFlushHold`). Each seek while the demuxers download has a small chance to hit that window, so
/// this seeks four HLS views many times (the built CLI, the real HTTP server, the player's own seek path) and
/// requires the process to survive every seek. The abort kills only the CLI, and the failure quotes its stderr.
final class AdaptiveDemuxSeekRaceTests: XCTestCase {
    private var binary: String { repoRoot.appendingPathComponent(".build/debug/multiview").path }
    /// Seeks sent; the gaps between them are 50–400 ms (from a fixed seed), so some land right as a view's
    /// demuxer moves on to its next fragment.
    private let seeks = 240

    func testSeekingHLSViewsOverAndOverNeverAbortsTheDemuxer() throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            XCTFail("\(binary) not built: run `swift build` (Scripts/test does)")
            return
        }
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let urls = (1...4).map { server.uri("angle\($0)/master.m3u8") }
        let cli = try InteractiveCLI([binary, "play", "--headless"] + urls)
        defer { cli.kill() }
        let playing = cli.wait(timeout: .seconds(90)) { $0.lastStatusLine.components(separatedBy: "PLAYING").count - 1 == 4 }
        XCTAssertTrue(playing, "the 4 HLS views never all played: \(cli.transcript)")
        guard playing else { return }

        var random = SeededRandom(seed: 15)
        var sent = 0
        while sent < seeks && cli.isRunning {
            let hundredths = random.next(below: 2000)
            guard cli.send("seek \(hundredths / 100).\(String(format: "%02d", hundredths % 100))") else { break }
            sent += 1
            // Pacing the stimulus (not waiting for a result): the race needs seeks at many different moments.
            Thread.sleep(forTimeInterval: Double(50 + random.next(below: 351)) / 1000)
        }
        // The abort comes when the escaped download completes, up to a fragment's download after the seek.
        let died = cli.wait(timeout: .seconds(5)) { !$0.isRunning }
        XCTAssertFalse(died, "the player died after \(sent) of \(seeks) seeks: \(cli.transcript)")
        XCTAssertFalse(cli.stderr.contains("request->in_use"), cli.transcript)
        guard !died else { return }
        XCTAssertEqual(sent, seeks, cli.transcript)
        cli.send("q")
        XCTAssertNotNil(cli.waitForExit(timeout: .seconds(10)), "q did not end the player: \(cli.transcript)")
    }
}

/// A small deterministic generator (SplitMix64), so every run sends the same seeks at the same gaps.
private struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
