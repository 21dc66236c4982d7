import Foundation
import GStreamer
import XCTest
@testable import Multiview

/// `RenderedMediaTime`: the latest media time a view's sinks rendered, written by the pad probes of several
/// streaming threads at once. Pure: plain threads stand for the streaming threads.
final class RenderedMediaTimeTests: XCTestCase {
    func testKeepsTheLatestTimeNotTheLastWritten() {
        let rendered = RenderedMediaTime()
        XCTAssertNil(rendered.latest, "nothing rendered yet")
        rendered.record(.seconds(2))
        rendered.record(.seconds(5))
        XCTAssertEqual(rendered.latest, .seconds(5))
        rendered.record(.seconds(3))
        XCTAssertEqual(rendered.latest, .seconds(5), "audio behind video does not move it back")
        rendered.record(.zero)
        XCTAssertEqual(rendered.latest, .seconds(5))
    }

    func testResetForgetsItSoASeekBackIsSeen() {
        let rendered = RenderedMediaTime()
        rendered.record(.seconds(20))
        rendered.reset()
        XCTAssertNil(rendered.latest)
        rendered.record(.seconds(4))
        XCTAssertEqual(rendered.latest, .seconds(4), "after the flush, the earlier time is the latest")
    }

    func testTheMaximumWinsAcrossThreads() {
        let rendered = RenderedMediaTime()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in stride(from: thread, to: 4000, by: 4).reversed() { rendered.record(.milliseconds(Double(i))) }
        }
        XCTAssertEqual(rendered.latest, .milliseconds(3999))
    }
}
