import Clocks
import Coordination
import GStreamer
import XCTest

/// One catch-up per participant at a time (issue 15's soak: HLS views back from a server outage were caught up by
/// their rejoin, the medium's bring-back and the end of a stall suspension at once; each sought the same pipeline
/// to its own aim and none was on time for 6–16 s). Fakes and a test clock: no pipeline, no daemon.
final class CatchUpOneAtATimeTests: XCTestCase {
    func testASecondCatchUpWhileOneRunsSharesItInsteadOfPreparingAgain() async throws {
        let (group, _, late, first) = try await FakeGroup.withCCatchingUp()
        let c = group.coordinators[2]
        let second = Task { try await c.join() }
        // The second request reaches the medium while the first preparation waits at the gate (real time: the
        // count below holds however late it comes — joined, or nothing to do once c is on the timeline).
        try await Task.sleep(for: .milliseconds(200))
        late.openGate()
        try await first.value
        try await second.value
        XCTAssertEqual(late.buffers.count, 1, "c was prepared \(late.buffers.count) times at once: \(late.buffers)")
        XCTAssertEqual(late.startedAt.count, 1, "c started at \(late.startedAt)")
        let ready = await group.medium.participants().map(\.isReady)
        XCTAssertEqual(ready, [true, true, true])
    }
}
