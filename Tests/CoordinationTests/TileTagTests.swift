import Coordination
import Foundation
import GStreamer
import Multiview
import TestSupport
import XCTest

/// Tile tags follow the views' states at once (issue 16: after `p` the tiles said `playing` 3 s later; a view added
/// with `add` said `waiting` 3 s after it played in sync). Real pipelines in the grid window under Xvfb; the tag is
/// read as the window drew it (`GridWindow.drawnTag`). The goal is 200 ms; the bound here is a generous 1 s.
final class TileTagTests: XCTestCase {
    final class Reporter: StageReporter, @unchecked Sendable {
        // Sendable: `lines` only through `lock`.
        private let lock = NSLock()
        private var lines: [String] = []
        func status(_ line: String) {}
        func note(_ line: String) { lock.withLock { lines.append(line) } }
        var notes: [String] { lock.withLock { lines } }
    }

    static let bound: Duration = .seconds(1)

    /// Polls every 10 ms until `state` holds, then until `tag` holds; returns how long the tag took after the state
    /// (nil, with a failure, when either never came).
    private func lag(stateTimeout: Duration = .seconds(10), state: () async -> Bool, tag: () -> Bool,
                     _ what: String) async -> Duration? {
        let start = ContinuousClock.now
        var stateSeen: ContinuousClock.Instant?
        while ContinuousClock.now - start < stateTimeout + .seconds(5) {
            if stateSeen == nil, await state() { stateSeen = .now }
            if let stateSeen {
                if tag() { return ContinuousClock.now - stateSeen }
                if ContinuousClock.now - stateSeen > .seconds(5) { break }
            } else if ContinuousClock.now - start > stateTimeout {
                break
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("\(what): \(stateSeen == nil ? "the state never came" : "the tag never followed")")
        return nil
    }

    private func allPlaying(_ stage: Stage, count: Int) async -> Bool {
        let players = await stage.currentPlayers
        guard players.count == count else { return false }
        for p in players where await p.currentStatus != PlayerStatus(state: .playing) { return false }
        return true
    }

    private func runStage(_ configuration: StageConfiguration) async throws -> (Stage, Task<StageOutcome, Never>, GridWindow) {
        let display = ProcessInfo.processInfo.environment["DISPLAY"] ?? ""
        guard !display.isEmpty else {
            XCTFail("no X display: run the tests through Scripts/test, which starts Xvfb")
            throw CancellationError()
        }
        let stage = Stage(configuration: configuration, reporter: Reporter())
        let run = Task { await stage.run() }
        let playing = await eventually(timeout: .seconds(15)) { await allPlaying(stage, count: configuration.sources.count) }
        XCTAssertTrue(playing, "every view plays")
        let maybeWindow = await stage.gridWindow
        return (stage, run, try XCTUnwrap(maybeWindow, "a window opened"))
    }

    func testPauseShowsOnTheTagsWithinASecond() async throws {
        let configuration = StageConfiguration(sources: Media.angles.prefix(2).map(MediaSource.init), headless: false,
                                               duration: 30, audio: .fakeSink, tileWidth: 320, tileHeight: 180)
        let (stage, run, window) = try await runStage(configuration)
        let players = await stage.currentPlayers
        func tags(say word: String) -> Bool { (0..<2).allSatisfy { window.drawnTag(tile: $0)?.hasSuffix(word) == true } }
        let shown = await eventually(timeout: .seconds(3)) { tags(say: "playing") }
        XCTAssertTrue(shown, "tags: \((0..<2).map { window.drawnTag(tile: $0) ?? "none" })")

        await stage.send(.pause)
        let paused = await lag(state: {
            for p in players where await p.currentStatus.state != .paused { return false }
            return true
        }, tag: { tags(say: "paused") }, "p")
        print("tag lag after p: \(paused.map { "\($0)" } ?? "never")")
        XCTAssertLessThan(paused ?? .seconds(99), TileTagTests.bound)

        await stage.send(.play)
        let resumed = await lag(state: { await allPlaying(stage, count: 2) }, tag: { tags(say: "playing") }, "play")
        print("tag lag after play: \(resumed.map { "\($0)" } ?? "never")")
        XCTAssertLessThan(resumed ?? .seconds(99), TileTagTests.bound)
        await stage.send(.quit)
        _ = await run.value
    }

    func testCoordinatedPauseAndAnAddedViewShowOnTheTagsWithinASecond() async throws {
        var configuration = StageConfiguration(sources: Media.angles.prefix(2).map(MediaSource.init), headless: false,
                                               duration: 40, audio: .fakeSink, tileWidth: 320, tileHeight: 180)
        configuration.coordination = CoordinatedStage(itemIdentifier: "tags")
        configuration.spareTiles = 1
        let (stage, run, window) = try await runStage(configuration)
        func tag(_ tile: Int) -> String { window.drawnTag(tile: tile) ?? "none" }

        await stage.send(.pause)
        let players = await stage.currentPlayers
        let paused = await lag(state: {
            for p in players where await p.currentStatus.state != .paused { return false }
            return true
        }, tag: { (0..<2).allSatisfy { tag($0).hasSuffix("paused") } }, "coordinated p")
        print("tag lag after coordinated p: \(paused.map { "\($0)" } ?? "never")")
        XCTAssertLessThan(paused ?? .seconds(99), TileTagTests.bound, "tags: \(tag(0)) | \(tag(1))")

        await stage.send(.play)
        let playing = await eventually(timeout: .seconds(10)) { await allPlaying(stage, count: 2) }
        XCTAssertTrue(playing)
        await stage.send(.add(Media.angles[2]))
        let added = await lag(stateTimeout: .seconds(20), state: { await allPlaying(stage, count: 3) },
                              tag: { tag(2).hasSuffix("playing") }, "add")
        print("tag lag after the added view played: \(added.map { "\($0)" } ?? "never"); tag: \(tag(2))")
        XCTAssertLessThan(added ?? .seconds(99), TileTagTests.bound, "tag: \(tag(2))")
        await stage.send(.quit)
        _ = await run.value
    }
}
