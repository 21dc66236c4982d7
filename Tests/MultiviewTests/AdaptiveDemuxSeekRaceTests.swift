import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15: GStreamer 1.22.0's adaptivedemux2 aborted the whole player after a seek of an HLS view
/// (`download_request_set_uri: assertion failed: (request->in_use == FALSE)`): a download still queued for its
/// helper thread when the seek stopped the stream escaped the cancellation and completed into the restarted stream
/// (see `AdaptiveDemuxFlushHold`).
///
/// The abort itself is rare: with the workaround off (hold 0), `Scripts/soak-seek-race` (4 HLS views, a seek every
/// 50-400 ms) aborted in 1 of 4 runs of 240 seeks on an idle two-core machine (at seek 234). A test that waits for
/// it would pass a regression 3 times in 4, so the workaround's mechanism is checked directly instead: every seek
/// of an HLS view holds its demuxer's FLUSH_START once, for the hold's length, and a local file's seek is never
/// held. The soak script stays the way to look for the abort itself; the CLI test below keeps a short burst of
/// seeks on four HLS views as a check that the process survives them.
final class AdaptiveDemuxFlushHoldTests: XCTestCase {
    func testEverySeekOfAnHLSViewHoldsItsDemuxerOnceAndALocalFileIsNeverHeld() async throws {
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let hls = try makePlayer(1, name: "angle1 (HLS)")
        let local = try makePlayer(2, name: "angle1 (file)")
        try await hls.load(MediaSource(server.uri("angle1/master.m3u8")))
        try await local.load(MediaSource(TestMedia.angle1))
        try await hls.play()
        try await local.play()
        let targets: [ClockTime] = [.seconds(8), .seconds(3), .seconds(14)]
        for target in targets {
            try await hls.seek(to: target)
            try await local.seek(to: target)
        }
        let holds = hls.adaptiveDemuxHold.holds
        // One hold per seek: the FLUSH_STARTs of one seek leave every source pad of the demuxer, only the first waits.
        XCTAssertEqual(holds.count, targets.count, "holds \(holds) for \(targets.count) seeks")
        // Long enough for the demuxer's download thread to wake up and list what it has queued (a few ms on two
        // loaded cores): at least 20 ms, whatever the hold is set to.
        for held in holds {
            XCTAssertGreaterThanOrEqual(held, max(AdaptiveDemuxFlushHold.hold, .milliseconds(20)), "a hold too short: \(holds)")
        }
        XCTAssertEqual(local.adaptiveDemuxHold.holds, [], "a local file's seek was held")
        let position = try XCTUnwrap(hls.queryPosition()).seconds
        XCTAssertEqual(position, 14, accuracy: 1, "the HLS view's last seek did not land")
        await hls.stop()
        await local.stop()
    }
}

/// Four HLS views seeked many times through the CLI (the real HTTP server, the player's own seek path): the
/// process must survive every seek. The abort kills only the CLI, and the failure quotes its stderr.
final class AdaptiveDemuxSeekRaceTests: XCTestCase {
    private var binary: String { repoRoot.appendingPathComponent(".build/debug/multiview").path }
    /// Seeks sent; the gaps between them are 50–400 ms (from a fixed seed), so some land right as a view's
    /// demuxer moves on to its next fragment. 60, not the 240 of before: at about one abort in a thousand seeks
    /// without the workaround, even 240 missed a regression most of the time (see `AdaptiveDemuxFlushHoldTests`).
    private let seeks = 60

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
        // The abort comes when the escaped download completes, up to a fragment's download after the seek. (3 s:
        // the last seek's target is below 20 s of 24 s media, so the views have not ended by then.)
        let died = cli.wait(timeout: .seconds(3)) { !$0.isRunning }
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
