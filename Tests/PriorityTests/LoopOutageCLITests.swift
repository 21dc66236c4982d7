import Foundation
import GStreamer
@testable import Priority
import TestSupport
import XCTest

/// Issue 15: `play --headless --no-audio --loop` with HLS views whose server is down when they loop. Each view
/// failed at its restart with "retrying until the server is back", and then the run ended at once: a failed view
/// counted as done although it was being retried. The views must be retried, play again once the server is back,
/// and loop on. The real CLI, two views of one real HTTP server, stopped across the loop point.
final class LoopOutageCLITests: XCTestCase {
    /// The state word of each view in a status line ("[  3.0s] 1 angle1/master.m3u8 PLAYING 0:22/0:24 | 2 …").
    private static func states(_ line: String) -> [String] {
        line.components(separatedBy: " | ").map { part in
            let words = part.split(separator: " ")
            guard let number = words.firstIndex(where: { Int($0) != nil && !$0.hasPrefix("[") }),
                  words.index(number, offsetBy: 2) < words.endIndex else { return "" }
            return String(words[words.index(number, offsetBy: 2)])
        }
    }

    func testLoopingHLSViewsWhoseServerIsDownAtTheLoopPointAreRetriedAndLoopOn() throws {
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root)
        defer { server.stop() }
        let binary = repoRoot.appendingPathComponent(".build/debug/multiview").path
        let app = try InteractiveCLI([binary, "play", "--headless", "--no-audio", "--loop", "--duration", "120",
                                      server.uri("angle1/master.m3u8"), server.uri("angle2/master.m3u8")])
        defer { app.kill() }
        XCTAssertTrue(app.wait(timeout: .seconds(40)) { Self.states($0.lastStatusLine) == ["PLAYING", "PLAYING"] },
                      "both views playing: \(app.transcript)")
        // Near the end: the last segment is fetched to play it; the loop's restart at 0 needs the server again.
        app.send("seek 22")
        XCTAssertTrue(app.wait(timeout: .seconds(30)) {
            $0.lastStatusLine.components(separatedBy: "PLAYING 0:22").count == 3
        }, "both views playing at 0:22: \(app.transcript)")
        server.stop()

        XCTAssertTrue(app.wait(timeout: .seconds(40)) { cli in
            (1...2).allSatisfy { cli.stderr.contains("error: view \($0) (angle\($0)/master.m3u8): network error") }
                && cli.stderr.components(separatedBy: "retrying until the server is back").count >= 3
        }, "both views failed at the loop point, to be retried: \(app.transcript)")
        XCTAssertFalse(app.stderr.contains("): loop: view"), "a failure at the loop point is one error line, not two: \(app.transcript)")
        // The point: the run goes on while its views are retried, and says RETRYING.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertTrue(app.isRunning, "the run ended while every view was being retried: \(app.transcript)")
        XCTAssertEqual(Self.states(app.lastStatusLine), ["RETRYING", "RETRYING"], app.transcript)

        try server.start()
        XCTAssertTrue(app.wait(timeout: .seconds(60)) { cli in
            (1...2).allSatisfy { cli.stderr.contains("note: view \($0) (angle\($0)/master.m3u8) recovered") }
        }, "both views recovered once the server was back: \(app.transcript)")
        let after = app.stdout.count
        XCTAssertTrue(app.wait(timeout: .seconds(30)) { cli in
            String(cli.stdout.dropFirst(after)).split(separator: "\n").contains { Self.states(String($0)) == ["PLAYING", "PLAYING"] }
        }, "both views playing again: \(app.transcript)")
        app.send("q")
        XCTAssertEqual(app.waitForExit(timeout: .seconds(15)), 0, app.transcript)
    }
}

/// Where a reloaded view resumes (`PriorityManager.resumable`): where it stopped, except on its last second.
final class ResumePositionTests: XCTestCase {
    func testAViewThatStoppedOnItsLastFrameResumesOneSecondBeforeTheEnd() {
        let duration = ClockTime.seconds(24)
        XCTAssertEqual(PriorityManager.resumable(.seconds(23.953), duration: duration), .seconds(23))
        XCTAssertEqual(PriorityManager.resumable(.seconds(24), duration: duration), .seconds(23))
        XCTAssertEqual(PriorityManager.resumable(.seconds(30), duration: duration), .seconds(23))
    }

    func testElsewhereItResumesWhereItStopped() {
        XCTAssertEqual(PriorityManager.resumable(.seconds(12.5), duration: .seconds(24)), .seconds(12.5))
        XCTAssertEqual(PriorityManager.resumable(.seconds(22.9), duration: .seconds(24)), .seconds(22.9))
        XCTAssertEqual(PriorityManager.resumable(.seconds(3), duration: nil), .seconds(3), "duration unknown")
        XCTAssertNil(PriorityManager.resumable(nil, duration: .seconds(24)))
        XCTAssertEqual(PriorityManager.resumable(.seconds(0.5), duration: .seconds(0.8)), .zero, "shorter than the margin")
    }
}
