import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import XCTest

/// Coordinated playback with real pipelines: one clock, everyone ready → start together, commands from any view.
final class CoordinatedPlaybackTests: XCTestCase {
    func testFourViewsStartTogetherAndStayAligned() async throws {
        let set = try await CoordinatedViews.make(Media.angles)
        // The command can come from any view: here view 3 presses play.
        try await set.players[2].play()
        let playing = await eventually { await set.statuses().allSatisfy { $0.state == .playing } }
        let statuses = await set.statuses()
        XCTAssertTrue(playing, "\(statuses)")
        try await Task.sleep(for: .seconds(2))
        let result = set.analysis()
        print("skew", result.summary)
        XCTAssertGreaterThan(result.summary.frames, 40)
        XCTAssertEqual(result.summary.views, 4)
        XCTAssertLessThan(try XCTUnwrap(result.summary.p99SkewMs), 10)
        // Every pipeline runs on the medium's clock.
        for p in set.players { XCTAssertTrue(p.pipeline.pipelineClock.map { $0 === set.medium.clock } ?? false) }
    }
}
