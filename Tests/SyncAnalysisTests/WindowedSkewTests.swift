import XCTest
@testable import SyncAnalysis

/// The soak's precise skew (`play --sync-log` → `sync-log-skew`): render-time logs compared in quiet windows, per
/// block. Pure: synthetic records, no pipeline, no daemon.
final class WindowedSkewTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    /// Views 1 and 2 play frames `from..<to` starting at `startClockNs`, view 2 `offsetNs` later.
    private func pair(_ indices: Range<Int>, at startClockNs: UInt64, offsetNs: Int64) -> [FrameRecord] {
        renders(view: 1, indices: Array(indices), startClockNs: startClockNs)
            + renders(view: 2, indices: Array(indices), offsetNs: offsetNs, startClockNs: startClockNs)
    }

    func testSkewInsideOneWindow() {
        let frames = pair(0..<90, at: baseClockNs, offsetNs: 400_000)
        let result = WindowedSkew.analyze(frames: frames, windows: [.init(startNs: baseClockNs, endNs: baseClockNs + 10 * second)],
                                          originNs: baseClockNs, blockNs: 300 * second)
        XCTAssertEqual(result.overall.frames, 90)
        XCTAssertEqual(result.overall.p99Ms!, 0.4, accuracy: 0.001)
        XCTAssertEqual(result.blocks.count, 1)
        XCTAssertEqual(result.blocks[0].views, 2)
        XCTAssertEqual(result.blocks[0].statistics.maxMs!, 0.4, accuracy: 0.001)
    }

    func testFramesOutsideTheWindowsAreNotCompared() {
        // A re-align after a command (50 ms apart) from 3 s to 4 s, outside the windows; in sync elsewhere.
        let before = pair(0..<90, at: baseClockNs, offsetNs: 100_000)
        let realign = pair(90..<120, at: baseClockNs + 3 * second, offsetNs: 50_000_000)
        let after = pair(120..<210, at: baseClockNs + 4 * second, offsetNs: 200_000)
        let windows = [WindowedSkew.Window(startNs: baseClockNs, endNs: baseClockNs + 3 * second),
                       WindowedSkew.Window(startNs: baseClockNs + 4 * second + 60_000_000, endNs: baseClockNs + 7 * second)]
        let result = WindowedSkew.analyze(frames: before + realign + after, windows: windows, originNs: baseClockNs,
                                          blockNs: 300 * second)
        XCTAssertEqual(result.overall.maxMs!, 0.2, accuracy: 0.001, "the 50 ms re-align counted")
        XCTAssertEqual(result.framesInWindows, 2 * 90 + 2 * 88, "frames 120 and 121 begin before the second window")
    }

    func testAViewExcludedFromAWindowIsLeftOut() {
        // View 3 replays ("r 3", suspended on purpose) 2 s behind during the window: excluded there.
        let frames = pair(0..<90, at: baseClockNs, offsetNs: 300_000)
            + renders(view: 3, indices: Array(0..<90), offsetNs: 2_000_000_000, startClockNs: baseClockNs)
        let window = WindowedSkew.Window(startNs: baseClockNs, endNs: baseClockNs + 10 * second, excludedViews: [3])
        let result = WindowedSkew.analyze(frames: frames, windows: [window], originNs: baseClockNs, blockNs: 300 * second)
        XCTAssertEqual(result.overall.maxMs!, 0.3, accuracy: 0.001)
        XCTAssertEqual(result.blocks[0].views, 2)
        let unexcluded = WindowedSkew.analyze(frames: frames, windows: [.init(startNs: baseClockNs, endNs: baseClockNs + 10 * second)],
                                              originNs: baseClockNs, blockNs: 300 * second)
        XCTAssertEqual(unexcluded.blocks[0].views, 3, "without the exclusion view 3 is compared (the check can fail)")
    }

    func testTheSameFramesInTwoWindowsNeverMeet() {
        // Both views play frames 0..<60 in window 1; after a seek back, view 1 plays them again in window 2 while
        // view 2 does not: had windows not been kept apart, view 1's second pass would pair with view 2's first.
        let first = pair(0..<60, at: baseClockNs, offsetNs: 0)
        let again = renders(view: 1, indices: Array(0..<60), startClockNs: baseClockNs + 5 * second)
        let windows = [WindowedSkew.Window(startNs: baseClockNs, endNs: baseClockNs + 3 * second),
                       WindowedSkew.Window(startNs: baseClockNs + 5 * second, endNs: baseClockNs + 8 * second)]
        let result = WindowedSkew.analyze(frames: first + again, windows: windows, originNs: baseClockNs, blockNs: 300 * second)
        XCTAssertEqual(result.overall.frames, 60)
        XCTAssertEqual(result.overall.maxMs!, 0, accuracy: 0.001)
    }

    func testBlocksShowADrift() {
        // In sync in the first 5 min block, 2 ms apart in the second, nothing compared in the third (listed).
        let frames = pair(0..<300, at: baseClockNs + 10 * second, offsetNs: 100_000)
            + pair(0..<300, at: baseClockNs + 310 * second, offsetNs: 2_000_000)
        let windows = [WindowedSkew.Window(startNs: baseClockNs, endNs: baseClockNs + 100 * second),
                       WindowedSkew.Window(startNs: baseClockNs + 300 * second, endNs: baseClockNs + 400 * second)]
        let result = WindowedSkew.analyze(frames: frames, windows: windows, originNs: baseClockNs, blockNs: 300 * second,
                                          untilNs: baseClockNs + 899 * second)
        XCTAssertEqual(result.blocks.map(\.index), [0, 1, 2])
        XCTAssertEqual(result.blocks[0].statistics.p99Ms!, 0.1, accuracy: 0.001)
        XCTAssertEqual(result.blocks[1].statistics.p99Ms!, 2.0, accuracy: 0.001)
        XCTAssertEqual(result.blocks[2].statistics.frames, 0)
        XCTAssertNil(result.blocks[2].statistics.p99Ms)
        XCTAssertEqual(result.blocks[1].startNs, baseClockNs + 300 * second)
    }

    func testViewsOnAnotherItemAreNotCompared() {
        let frames = renders(view: 1, indices: Array(0..<30), item: "event")
            + renders(view: 2, indices: Array(0..<30), offsetNs: 7_000_000, item: "view 2")
        let result = WindowedSkew.analyze(frames: frames, windows: [.init(startNs: 0, endNs: .max)], originNs: baseClockNs,
                                          blockNs: 300 * second)
        XCTAssertEqual(result.overall.frames, 0)
    }

    func testWindowBoundaries() {
        let windows = [WindowedSkew.Window(startNs: 10, endNs: 20), WindowedSkew.Window(startNs: 30, endNs: 40)]
        XCTAssertNil(WindowedSkew.windowIndex(of: 9, in: windows))
        XCTAssertEqual(WindowedSkew.windowIndex(of: 10, in: windows), 0)
        XCTAssertNil(WindowedSkew.windowIndex(of: 20, in: windows), "the end is outside")
        XCTAssertNil(WindowedSkew.windowIndex(of: 25, in: windows))
        XCTAssertEqual(WindowedSkew.windowIndex(of: 39, in: windows), 1)
        XCTAssertNil(WindowedSkew.windowIndex(of: 40, in: windows))
        XCTAssertNil(WindowedSkew.windowIndex(of: 5, in: []))
    }
}
