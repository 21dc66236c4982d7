import XCTest
@testable import SyncAnalysis

final class SyncAnalyzerTests: XCTestCase {
    let run = phase(0, "play", from: baseClockNs - 50_000_000, to: baseClockNs + 10_000_000_000)

    func testFrameIndexAndAlignedTimeDefinitions() {
        XCTAssertEqual(SyncAnalyzer.frameIndex(mediaTimeNs: 33_000_000), 1)
        XCTAssertEqual(SyncAnalyzer.frameIndex(mediaTimeNs: 67_000_000), 2)
        XCTAssertEqual(SyncAnalyzer.frameIndex(mediaTimeNs: 66_666_666), 2)
        XCTAssertEqual(SyncAnalyzer.frameIndex(mediaTimeNs: 40_000_000, fps: 25), 1)
        // WebM frame 1 at 33 ms is 333 333 ns early: its aligned time is 333 333 ns later than its render time.
        let record = FrameRecord(view: 1, mediaTimeNs: 33_000_000, renderClockNs: 10_000_000, rate: 1, phase: 0,
                                 item: "a")
        XCTAssertEqual(SyncAnalyzer.alignedRenderTimeNs(record), 10_333_333.33, accuracy: 0.01)
        var fast = record; fast.rate = 2
        XCTAssertEqual(SyncAnalyzer.alignedRenderTimeNs(fast), 10_166_666.67, accuracy: 0.01)
    }

    func testConstantOffsetGivesThatSkew() {
        let frames = twoViews(indices: Array(0..<90), offsetNs: 300_000)
        let summary = SyncAnalyzer.analyze(frames: frames, phases: [run], mode: "coordinated").summary
        XCTAssertEqual(summary.mode, "coordinated")
        XCTAssertEqual(summary.views, 2)
        XCTAssertEqual(summary.frames, 90)
        XCTAssertEqual(try XCTUnwrap(summary.p50SkewMs), 0.3, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(summary.p99SkewMs), 0.3, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(summary.maxSkewMs), 0.3, accuracy: 1e-6)
        XCTAssertEqual(summary.phases.count, 1)
        XCTAssertEqual(summary.phases[0].frames, 90)
        XCTAssertEqual(summary.phases[0].views, 2)
        XCTAssertEqual(summary.phases[0].name, "play")
        XCTAssertEqual(try XCTUnwrap(summary.phases[0].maxSkewMs), 0.3, accuracy: 1e-6)
    }

    func testContainerQuantizationIsRemoved() {
        let webm = renders(view: 1, indices: Array(0..<300), webm: true)
        let mp4 = renders(view: 2, indices: Array(0..<300), webm: false)
        // The raw render times really do differ by up to a third of a millisecond.
        let rawMax = zip(webm, mp4).map { abs(Int64($0.renderClockNs) - Int64($1.renderClockNs)) }.max()!
        XCTAssertGreaterThan(rawMax, 300_000)

        let result = SyncAnalyzer.analyze(frames: webm + mp4, phases: [run], mode: "coordinated")
        XCTAssertEqual(result.summary.frames, 300)
        XCTAssertLessThan(try XCTUnwrap(result.summary.maxSkewMs), 0.01)
        XCTAssertEqual(result.samples.count, 300)
        XCTAssertTrue(result.samples.allSatisfy { $0.skewNs < 10_000 && $0.phase == 0 })
    }

    func testRateTwoDividesTheCorrectionByTheRate() {
        let webm = renders(view: 1, indices: Array(0..<120), webm: true, rate: 2)
        let mp4 = renders(view: 2, indices: Array(0..<120), webm: false, rate: 2, offsetNs: 500_000)
        let summary = SyncAnalyzer.analyze(frames: webm + mp4, phases: [run], mode: "coordinated").summary
        XCTAssertEqual(summary.frames, 120)
        // Correcting at rate 1 would be off by up to 1/6 ms; at rate 2 the skew is the true 0.5 ms.
        XCTAssertEqual(try XCTUnwrap(summary.p50SkewMs), 0.5, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(summary.maxSkewMs), 0.5, accuracy: 0.01)
        XCTAssertGreaterThan(try XCTUnwrap(summary.p50SkewMs), 0.49)
    }

    func testBackwardSeekWithinAPhaseMatchesPasses() {
        // Both views play frames 0…59; view 1 shows frame 60 before the seek lands, view 2 does not. Then both
        // play 30…89 again. View 2 is 1 ms behind before the seek and 2 ms after it.
        let seekClock = baseClockNs + 3_000_000_000
        let frames = renders(view: 1, indices: Array(0...60))
            + renders(view: 2, indices: Array(0..<60), offsetNs: 1_000_000)
            + twoViews(indices: Array(30..<90), offsetNs: 2_000_000, startClockNs: seekClock)
        let summary = SyncAnalyzer.analyze(frames: frames.shuffled(), phases: [run], mode: "coordinated").summary
        // 60 groups in the first pass (frame 60 only by view 1), 60 in the second.
        XCTAssertEqual(summary.frames, 120)
        XCTAssertEqual(try XCTUnwrap(summary.p50SkewMs), 1.0, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(summary.p99SkewMs), 2.0, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(summary.maxSkewMs), 2.0, accuracy: 1e-6)
    }

    func testReversePlaybackIsOnePass() {
        let indices = Array((0..<60).reversed())
        let frames = renders(view: 1, indices: indices, rate: -1)
            + renders(view: 2, indices: Array(indices.dropFirst()), rate: -1, offsetNs: 300_000, startIndex: 59)
        let summary = SyncAnalyzer.analyze(frames: frames, phases: [run], mode: "coordinated").summary
        XCTAssertEqual(summary.frames, 59)
        XCTAssertEqual(try XCTUnwrap(summary.maxSkewMs), 0.3, accuracy: 1e-6)
    }

    func testViewOnAnotherItemIsNotCompared() {
        let frames = twoViews(indices: Array(0..<30), offsetNs: 300_000)
            + renders(view: 3, indices: Array(0..<30), offsetNs: 50_000_000, item: "b")
        let summary = SyncAnalyzer.analyze(frames: frames, phases: [run], mode: "coordinated").summary
        XCTAssertEqual(summary.views, 3)
        XCTAssertEqual(summary.phases[0].views, 3)
        XCTAssertEqual(summary.frames, 30)
        XCTAssertEqual(try XCTUnwrap(summary.maxSkewMs), 0.3, accuracy: 1e-6)
        // The lone view on item b does not keep the phase from being aligned.
        XCTAssertNotNil(summary.phases[0].timeToAlignedMs)
    }

    func testPhasesAreSeparateAndTimeToAligned() {
        let command1 = baseClockNs + 2_000_000_000
        let phases = [
            phase(0, "play", from: baseClockNs - 40_000_000, to: command1),
            phase(1, "late join", from: command1, to: command1 + 2_000_000_000),
            phase(2, "suspend 2", from: command1 + 2_000_000_000, to: command1 + 3_000_000_000),
        ]
        // Phase 0: views 1 and 2 in step from the first frame, 40 ms after the command.
        var frames = twoViews(indices: Array(0..<60), offsetNs: 200_000, phase: 0)
        // Phase 1: view 1 renders frame 60 onwards from 40 ms after the command; view 3 joins and first renders
        // frame 63 (100 ms later), 0.5 ms after view 1 did.
        let start1 = command1 + 40_000_000
        frames += twoViews(indices: Array(60..<120), offsetNs: 200_000, startClockNs: start1, phase: 1)
        frames += renders(view: 3, indices: Array(63..<120), webm: true, offsetNs: 500_000, startClockNs: start1,
                          phase: 1, startIndex: 60)
        // Phase 2: only view 1 renders.
        frames += renders(view: 1, indices: Array(120..<150), startClockNs: command1 + 2_040_000_000, phase: 2)

        let summary = SyncAnalyzer.analyze(frames: frames, phases: phases, mode: "coordinated").summary
        XCTAssertEqual(summary.phases.map(\.index), [0, 1, 2])
        XCTAssertEqual(summary.phases.map(\.views), [2, 3, 1])
        XCTAssertEqual(summary.phases.map(\.frames), [60, 60, 0])
        XCTAssertEqual(summary.frames, 120)
        XCTAssertEqual(summary.views, 3)
        XCTAssertEqual(try XCTUnwrap(summary.phases[0].timeToAlignedMs), 40.2, accuracy: 1e-6)
        // Frame 63 is the first with all three views: view 3's render, 40 + 100 + 0.5 ms after the command.
        XCTAssertEqual(try XCTUnwrap(summary.phases[1].timeToAlignedMs), 140.5, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(summary.phases[1].maxSkewMs), 0.5, accuracy: 0.01)
        XCTAssertEqual(try XCTUnwrap(summary.phases[1].p50SkewMs), 0.5, accuracy: 0.01)   // 57 of 60 at 0.5 ms
        XCTAssertNil(summary.phases[2].timeToAlignedMs)
        XCTAssertNil(summary.phases[2].p50SkewMs)
        XCTAssertNil(summary.phases[2].maxSkewMs)
        // Samples carry their phase and are in clock order.
        let result = SyncAnalyzer.analyze(frames: frames, phases: phases, mode: "coordinated")
        XCTAssertEqual(result.samples.filter { $0.phase == 1 }.count, 60)
        XCTAssertEqual(result.samples.map(\.clockNs), result.samples.map(\.clockNs).sorted())
        XCTAssertEqual(result.samples.first?.clockNs, baseClockNs)
    }

    /// Slowest first frame: per view, command → its first render after it; the largest over the views. A baseline
    /// run gives each view its own command time (it seeks one independent player after another).
    func testSlowestFirstFrameCountsFromEachViewsOwnCommand() throws {
        let command = baseClockNs
        // Views 1 and 2 render from 40 ms after the command (view 2 0.2 ms later); view 3 from 140.5 ms.
        let start = command + 40_000_000
        var frames = twoViews(indices: Array(0..<30), offsetNs: 200_000, startClockNs: start, phase: 0)
        frames += renders(view: 3, indices: Array(3..<30), offsetNs: 500_000, startClockNs: start, startIndex: 0)
        // A frame rendered before the command (the old timeline) does not count.
        frames.append(FrameRecord(view: 1, mediaTimeNs: 0, renderClockNs: command - 5_000_000, rate: 1, phase: 0, item: "a"))
        var seek = phase(0, "seek +10", from: command, to: command + 2_000_000_000)

        let together = SyncAnalyzer.analyze(frames: frames, phases: [seek], mode: "coordinated").summary
        XCTAssertEqual(try XCTUnwrap(together.phases.first?.slowestFirstFrameMs), 140.5, accuracy: 1e-3)

        // View 3 got its command 100 ms after the others: its own seek → first frame is 40.5 ms, so the slowest
        // view's own is view 3's 40.5 ms; view 2 (no entry) counts from the phase's command: 40.2 ms.
        seek.viewCommandClockNs = ["1": command, "3": command + 100_000_000]
        let oneByOne = SyncAnalyzer.analyze(frames: frames, phases: [seek], mode: "baseline").summary
        XCTAssertEqual(try XCTUnwrap(oneByOne.phases.first?.slowestFirstFrameMs), 40.5, accuracy: 1e-3)
        seek.viewCommandClockNs = ["3": command + 140_000_000]
        let third = SyncAnalyzer.analyze(frames: frames, phases: [seek], mode: "baseline").summary
        XCTAssertEqual(try XCTUnwrap(third.phases.first?.slowestFirstFrameMs), 40.2, accuracy: 1e-3)
    }

    func testTimeToAlignedIsNilWhenViewsNeverShowTheSameFrame() {
        let frames = renders(view: 1, indices: Array(0..<30)) + renders(view: 2, indices: Array(30..<60))
        let summary = SyncAnalyzer.analyze(frames: frames, phases: [run], mode: "baseline").summary
        XCTAssertEqual(summary.frames, 0)
        XCTAssertEqual(summary.phases[0].views, 2)
        XCTAssertNil(summary.phases[0].timeToAlignedMs)
        XCTAssertNil(summary.p99SkewMs)
    }

    func testNearestRankPercentiles() {
        XCTAssertEqual(SkewStatistics.nearestRank([10, 20, 30, 40], percent: 50), 20)
        XCTAssertEqual(SkewStatistics.nearestRank([10, 20, 30, 40], percent: 99), 40)
        XCTAssertEqual(SkewStatistics.nearestRank([10, 20, 30, 40], percent: 0), 10)
        XCTAssertNil(SkewStatistics.nearestRank([Int](), percent: 50))

        let five = SkewStatistics(skewsNs: [5_000_000, 1_000_000, 4_000_000, 2_000_000, 3_000_000])
        XCTAssertEqual(five, SkewStatistics(frames: 5, p50Ms: 3, p99Ms: 5, maxMs: 5))

        let hundred = SkewStatistics(skewsNs: (1...100).reversed().map { UInt64($0) * 1_000_000 })
        XCTAssertEqual(hundred, SkewStatistics(frames: 100, p50Ms: 50, p99Ms: 99, maxMs: 100))

        let twoHundred = SkewStatistics(skewsNs: (1...200).map { UInt64($0) * 1_000_000 })
        XCTAssertEqual(twoHundred.p50Ms, 100)
        XCTAssertEqual(twoHundred.p99Ms, 198)
        XCTAssertEqual(twoHundred.maxMs, 200)
    }

    func testEmptyInput() throws {
        let empty = SyncAnalyzer.analyze(frames: [], phases: [], mode: "baseline")
        XCTAssertEqual(empty.summary, SyncSummary(mode: "baseline", views: 0, frames: 0, p50SkewMs: nil,
                                                  p99SkewMs: nil, maxSkewMs: nil, phases: []))
        XCTAssertTrue(empty.samples.isEmpty)

        let phasesOnly = SyncAnalyzer.analyze(frames: [], phases: [run], mode: "coordinated").summary
        XCTAssertEqual(phasesOnly.frames, 0)
        XCTAssertEqual(phasesOnly.phases, [PhaseSummary(index: 0, name: "play", views: 0, frames: 0, p50SkewMs: nil,
                                                        p99SkewMs: nil, maxSkewMs: nil, timeToAlignedMs: nil)])
        // Nulls are written, not left out.
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: SyncReportWriter.summaryJSON(phasesOnly))
            as? [String: Any])
        XCTAssertTrue(json["p50_skew_ms"] is NSNull)
        let phase = try XCTUnwrap((json["phases"] as? [[String: Any]])?.first)
        XCTAssertEqual(Set(json.keys),
                       ["mode", "views", "frames", "p50_skew_ms", "p99_skew_ms", "max_skew_ms", "phases"])
        XCTAssertEqual(Set(phase.keys), ["index", "name", "views", "frames", "p50_skew_ms", "p99_skew_ms",
                                         "max_skew_ms", "time_to_aligned_ms", "slowest_first_frame_ms"])
        for key in ["p50_skew_ms", "p99_skew_ms", "max_skew_ms", "time_to_aligned_ms", "slowest_first_frame_ms"] {
            XCTAssertTrue(phase[key] is NSNull, key)
        }
        for key in ["p99_skew_ms", "max_skew_ms"] { XCTAssertTrue(json[key] is NSNull, key) }
    }

    func testRecordsOfAnUnlistedPhaseStillCount() {
        let frames = twoViews(indices: Array(0..<10), offsetNs: 100_000, phase: 7)
        let summary = SyncAnalyzer.analyze(frames: frames, phases: [run], mode: "coordinated").summary
        XCTAssertEqual(summary.frames, 10)
        XCTAssertEqual(summary.phases.map(\.index), [0, 7])
        XCTAssertEqual(summary.phases[1].name, "(unlisted)")
        XCTAssertEqual(summary.phases[1].frames, 10)
        XCTAssertEqual(summary.phases[0].frames, 0)
    }
}
