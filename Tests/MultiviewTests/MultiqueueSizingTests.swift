import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Every multiqueue of a player's pipeline holds at least `Player.minimumInterleave` per stream (see
/// SeekThenPauseTests for what a smaller one did).
final class MultiqueueSizingTests: XCTestCase {
    func testEveryMultiqueueOfAPrerolledPipelineHasTheMinimumInterleave() async throws {
        let player = try makePlayer()
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.preroll()
        let queues = player.pipeline.descendants { $0.factoryName == "multiqueue" }
        XCTAssertFalse(queues.isEmpty, "playbin3 has no multiqueue")
        let expected = Int(ClockTime(Player.minimumInterleave).nanoseconds)
        for queue in queues {
            XCTAssertEqual(try queue.get("min-interleave-time", as: Int.self), expected, queue.name)
        }
        await player.stop()
    }
}
