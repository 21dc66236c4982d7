import Synchronization
import XCTest
@testable import Multiview

/// The heap trim after a pipeline's NULL (`HeapTrimmer`): its schedule (pure), one trim for requests made together,
/// and a real view taken to NULL asking for one.
final class HeapTrimmerTests: XCTestCase {
    func testTheScheduleSharesAPendingTrimAndSpacesTrimsApart() {
        var schedule = HeapTrimSchedule(delay: .seconds(1), minimumInterval: .seconds(2))
        let t0 = ContinuousClock.now
        XCTAssertEqual(schedule.request(at: t0), t0 + .seconds(1), "the first request: after the delay")
        XCTAssertNil(schedule.request(at: t0 + .milliseconds(300)), "a request while one is pending shares it")
        schedule.trimming(at: t0 + .seconds(1))
        XCTAssertEqual(schedule.request(at: t0 + .milliseconds(1500)), t0 + .seconds(3),
                       "soon after a trim: not before the minimum interval from its start")
        XCTAssertNil(schedule.request(at: t0 + .seconds(2)))
        schedule.trimming(at: t0 + .seconds(3))
        XCTAssertEqual(schedule.request(at: t0 + .seconds(10)), t0 + .seconds(11), "long after: the delay again")
    }

    func testRequestsMadeTogetherGiveOneTrim() async throws {
        let trims = Mutex(0)
        let trimmer = HeapTrimmer(delay: .milliseconds(50), minimumInterval: .milliseconds(200)) { trims.withLock { $0 += 1 } }
        for _ in 0..<5 { trimmer.request() }
        let first = await poll(upTo: .seconds(3)) { trimmer.completedTrims >= 1 }
        XCTAssertTrue(first, "no trim 3 s after five requests")
        try await Task.sleep(for: .milliseconds(400))
        XCTAssertEqual(trims.withLock { $0 }, 1, "five requests made together: one trim")
        trimmer.request()
        let second = await poll(upTo: .seconds(3)) { trimmer.completedTrims >= 2 }
        XCTAssertTrue(second, "a later request: a second trim")
    }

    func testAViewTakenToNullAsksForATrim() async throws {
        let player = try makePlayer(1, name: "trim")
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        // The load's own NULL (before the new source) asked for a trim too: it runs 1 s later, before this count.
        try await Task.sleep(for: .milliseconds(2500))
        let before = HeapTrimmer.shared.completedTrims
        await player.stop()
        let trimmed = await poll(upTo: .seconds(5)) { HeapTrimmer.shared.completedTrims > before }
        XCTAssertTrue(trimmed, "the view's NULL was not followed by a heap trim within 5 s")
    }

    private func poll(upTo limit: Duration, _ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
