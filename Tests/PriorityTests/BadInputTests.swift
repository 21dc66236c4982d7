import Foundation
import GStreamer
import Multiview
import Priority
import TestSupport
import XCTest

/// Bad input on one HLS view (a 404 variant, a garbage playlist, the server going away mid-play): that view
/// reports one clear error naming it, or stalls and recovers when the server is back; the other view goes on.
final class BadInputTests: XCTestCase {
    struct Views {
        let manager: PriorityManager
        let bad: Player
        let good: Player
        let badCounter: StallCounter
        let goodCounter: StallCounter
    }

    override func setUp() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
    }

    /// View 1 plays `badURL`, view 2 angle2 from `server`; both under one priority manager.
    private func start(bad badURL: String, goodServer server: HLSServer) async throws -> Views {
        let manager = PriorityManager(budget: 20_000_000)
        let bad = try makePlayer(1, name: "bad"), good = try makePlayer(2, name: "angle2")
        let goodSource = MediaSource(server.uri("angle2/master.m3u8")), badSource = MediaSource(badURL)
        await manager.attach(bad, source: badSource, priority: .high)
        await manager.attach(good, source: goodSource, priority: .low)
        let views = Views(manager: manager, bad: bad, good: good, badCounter: await StallCounter(bad),
                          goodCounter: await StallCounter(good))
        try await good.load(goodSource)
        try? await bad.load(badSource)
        async let goodPlays: Void = good.play(timeout: .seconds(30))
        _ = try? await bad.play(timeout: .seconds(30))
        try await goodPlays
        return views
    }

    /// The good view keeps playing: it advances by `seconds` of media (generous wall-clock allowance: the machine
    /// is shared, and a view may still be filling its buffer when the bad one fails).
    private func assertKeepsPlaying(_ player: Player, for seconds: Double, _ what: String) async throws {
        let before = await player.position?.seconds ?? 0
        let advanced = await eventually(timeout: .seconds(seconds + 15)) {
            let now = await player.position?.seconds ?? 0
            return now >= before + seconds
        }
        let after = await player.position
        let status = await player.currentStatus
        let failure = await player.failure
        XCTAssertNil(failure, "\(what): the good view failed")
        XCTAssertTrue(advanced, "\(what): the good view did not advance \(seconds) s from \(before) s (now \(String(describing: after)), \(status))")
    }

    /// A bad master playlist served next to out/hls's angles (`folder/master.m3u8` holding `master`): view 1 plays
    /// it, view 2 angle2 from the same server. Returns once view 1 failed, or after 15 s with `failure` nil.
    private struct BadMaster {
        let root: TemporaryDirectory
        let server: HLSServer
        let views: Views
        let failure: PlayerError?
    }

    private func startBadMaster(_ folder: String, _ master: Data) async throws -> BadMaster {
        let root = try TemporaryDirectory.hlsWebRoot()
        try FileManager.default.createDirectory(atPath: root.path(folder), withIntermediateDirectories: true)
        try master.write(to: URL(fileURLWithPath: root.path("\(folder)/master.m3u8")))
        let server = try HLSServer(root: root.url.path)
        let views = try await start(bad: server.uri("\(folder)/master.m3u8"), goodServer: server)
        _ = await eventually(timeout: .seconds(15)) { await views.bad.failure != nil }
        return BadMaster(root: root, server: server, views: views, failure: await views.bad.failure)
    }

    func testA404VariantFailsThatViewOnlyWithAClearError() async throws {
        let run = try await startBadMaster("missing", Data("""
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=700000,RESOLUTION=640x360
        nowhere/index.m3u8
        """.utf8))
        defer { run.server.stop() }
        let views = run.views, failure = run.failure
        XCTAssertNotNil(failure, "a 404 variant did not fail the view")
        let text = failure?.description ?? ""
        XCTAssertTrue(text.hasPrefix("view 1 (bad)"), text)
        // hlsdemux2 only says "the stream is of a different type"; the manager names the missing variant.
        let explanation = await views.manager.explainFailure(ofView: 1) ?? ""
        XCTAssertTrue(explanation.contains("nowhere/index.m3u8") && explanation.contains("HTTP 404"), explanation)
        try await assertKeepsPlaying(views.good, for: 3, "404 variant")
        await views.bad.stop(); await views.good.stop()
    }

    func testAGarbagePlaylistFailsThatViewOnlyWithAClearError() async throws {
        let run = try await startBadMaster("garbage", Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }))
        defer { run.server.stop() }
        let views = run.views, failure = run.failure
        XCTAssertNotNil(failure, "a garbage playlist did not fail the view")
        XCTAssertTrue(failure?.description.hasPrefix("view 1 (bad)") == true, "\(String(describing: failure))")
        // The manager could not read a ladder from it: the view has no rungs and no cap, nothing crashed.
        let report = await views.manager.report(forView: 1)
        XCTAssertEqual(report?.rungCount, 0)
        let explanation = await views.manager.explainFailure(ofView: 1)
        XCTAssertEqual(explanation, "master.m3u8 is not an HLS playlist")
        try await assertKeepsPlaying(views.good, for: 3, "garbage playlist")
        await views.bad.stop(); await views.good.stop()
    }

    func testServerStoppingMidPlayStallsThatViewWhichRecoversWhenItReturns() async throws {
        // View 1 has a server of its own (paced, so it cannot fetch everything at once); view 2 another.
        let badServer = try HLSServer(root: HLSFixture.root, rate: "3M")
        let goodServer = try HLSServer(root: HLSFixture.root)
        defer { badServer.stop(); goodServer.stop() }
        let views = try await start(bad: badServer.uri("angle1/master.m3u8"), goodServer: goodServer)
        let playing = await eventually(timeout: .seconds(10)) { await views.bad.currentStatus.state == .playing }
        XCTAssertTrue(playing, "view 1 never played")
        // Played past 1 s (a position to resume from that is not the start).
        _ = await eventually(timeout: .seconds(10)) { await views.bad.position?.seconds ?? 0 > 1.0 }

        let positionBefore = await views.bad.position?.seconds ?? 0
        XCTAssertGreaterThan(positionBefore, 1.0)
        badServer.stop()
        let stalled = await eventually(timeout: .seconds(12)) {
            let state = await views.bad.currentStatus.state
            let failure = await views.bad.failure
            return state == .buffering || failure != nil
        }
        XCTAssertTrue(stalled, "view 1 neither stalled nor failed with its server gone")
        try await assertKeepsPlaying(views.good, for: 2, "server stopped")
        try await Task.sleep(for: .seconds(2))

        var failedMeanwhile = false
        if let failure = await views.bad.failure {
            // hlsdemux2 gives up on a VOD stream after a few failed downloads: a clear error naming the view, and
            // the stage's observer keeps the view and retries until the server is back.
            failedMeanwhile = true
            XCTAssertTrue(failure.description.hasPrefix("view 1 (bad): network error"), failure.description)
            let observer = PriorityStageObserver(manager: views.manager, initialPriorities: [:])
            let refined = await observer.refine(failure)
            XCTAssertTrue(refined.description.contains("retrying until the server is back"), refined.description)
            // The stage's status says RETRYING (not FAILED) while the manager brings the view back.
            let retrying = await eventually(timeout: .seconds(3)) { await observer.isRetrying(view: 1) }
            XCTAssertTrue(retrying, "the observer does not say view 1 is being retried")
            print("server stop: view 1 failed with: \(refined)")
        }
        try badServer.start()
        let recovered = await eventually(timeout: .seconds(40)) { await views.bad.currentStatus.state == .playing }
        let status = await views.bad.currentStatus
        let position = await views.bad.position
        // It carries on from where it was (at least the position seen before the server stopped), not from 0.
        XCTAssertGreaterThanOrEqual(position?.seconds ?? 0, positionBefore - 0.3, "resumed at \(String(describing: position))")
        if failedMeanwhile {
            let done = await eventually(timeout: .seconds(5)) {
                await !PriorityStageObserver(manager: views.manager, initialPriorities: [:]).isRetrying(view: 1)
            }
            XCTAssertTrue(done, "still retrying after the view plays again")
        }
        XCTAssertTrue(recovered, "view 1 did not recover where it was (\(positionBefore) s) after the server came back: \(status), at \(String(describing: position))")
        print("server stop: view 1 \(failedMeanwhile ? "failed and was reloaded" : "stalled \(views.badCounter.stalls) time(s)"), playing again at \(String(describing: position)) (was at \(positionBefore) s)")
        XCTAssertNil(views.goodCounter.failure)
        await views.bad.stop(); await views.good.stop()
    }
}
