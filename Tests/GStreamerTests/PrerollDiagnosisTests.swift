import Foundation
import GStreamer
import XCTest

/// `sinksStillPrerolling`: what a preroll timeout names. A branch that gets no buffer keeps its sink's change
/// pending; a branch that got its first buffer does not show.
final class PrerollDiagnosisTests: XCTestCase {
    func testOnlyTheSinkOfTheBranchThatGotNoBufferIsNamed() throws {
        // Two branches: one flows, one is held by a valve that drops everything (no first buffer ever).
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc is-live=false ! fakesink name=flowing \
            audiotestsrc ! valve drop=true ! fakesink name=held
            """)
        XCTAssertEqual(try pipeline.setState(.paused), .async)
        // The flowing branch prerolls within moments; the held one never does.
        let deadline = Date().addingTimeInterval(10)
        var waiting = pipeline.sinksStillPrerolling()
        while waiting.count > 1 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            waiting = pipeline.sinksStillPrerolling()
        }
        XCTAssertEqual(waiting, ["held"])
        XCTAssertTrue(pipeline.isStateChangePending, "the held branch keeps the preroll pending")
    }

    func testNothingIsNamedOnceEveryBranchPrerolled() throws {
        let pipeline = try Pipeline.parseLaunch("videotestsrc ! fakesink name=a audiotestsrc ! fakesink name=b")
        XCTAssertEqual(try pipeline.setState(.paused), .async)
        XCTAssertEqual(try pipeline.waitForState(timeout: .seconds(10)), .paused)
        XCTAssertEqual(pipeline.sinksStillPrerolling(), [])
    }
}
