import GStreamer
import XCTest
@testable import Multiview

/// The status's three forms: the full line, the compact line a pipe gets (4 views in 120 columns), and the block
/// a terminal redraws. Pure values (milliseconds).
final class StageStatusTests: XCTestCase {
    private func view(_ n: Int, _ name: String, _ state: StageStatus.State, at seconds: Int? = 3,
                      labels: [String] = []) -> StageStatus.View {
        StageStatus.View(number: n, name: name, state: state, position: seconds.map { .seconds(Double($0)) },
                         duration: seconds.map { _ in .seconds(24) }, labels: labels)
    }

    private var four: StageStatus {
        StageStatus(elapsed: 3, views: [
            view(1, "angle1-wide.mp4", .playing, labels: ["high 1920x1080 5.5M"]),
            view(2, "angle2-left.webm", .paused, labels: ["muted"]),
            view(3, "angle3/master.m3u8", .retrying, at: nil),
            view(4, "angle4-overhead.mp4", .failed, at: nil),
        ])
    }

    func testTheFullLineKeepsNamesAndPreciseTimesAndNoFailureText() {
        let line = four.line
        XCTAssertTrue(line.hasPrefix("[   3.0s] 1 angle1-wide.mp4 PLAYING 0:00:03"), line)
        XCTAssertTrue(line.contains("[high 1920x1080 5.5M] | 2 angle2-left.webm PAUSED 0:00:03"), line)
        XCTAssertTrue(line.contains("| 3 angle3/master.m3u8 RETRYING | 4 angle4-overhead.mp4 FAILED"), line)
    }

    func testFourViewsFitIn120ColumnsPiped() {
        let line = four.compactLine(width: 120)
        XCTAssertLessThanOrEqual(line.count, 120, line)
        XCTAssertTrue(line.contains("1 ") && line.contains("PLAYING 0:03/0:24"), line)
        XCTAssertTrue(line.contains("RETRYING") && line.contains("FAILED") && line.contains("PAUSED"), line)
        // Two views keep everything, names and labels.
        let two = StageStatus(elapsed: 3, views: Array(four.views.prefix(2))).compactLine(width: 120)
        XCTAssertEqual(two, "[   3.0s] 1 angle1-wide.mp4 PLAYING 0:03/0:24 [high 1920x1080 5.5M] | 2 angle2-left.webm PAUSED 0:03/0:24 [muted]")
    }

    func testNamesShrinkThenGoAsViewsGrow() {
        let five = StageStatus(elapsed: 12, views: (1...5).map { view($0, "camera-\($0)-long-name.mp4", .playing) })
        let line = five.compactLine(width: 120)
        XCTAssertTrue(line.hasPrefix("[  12.0s] 1 PLAYING 0:03/0:24 | 2 PLAYING"), line)
        XCTAssertLessThanOrEqual(line.count, 120, line)
        // Twenty views: grouped by state, short.
        var twenty = (1...20).map { view($0, "camera-\($0).mp4", .playing, at: $0 == 20 ? 4 : 3) }
        twenty[6].state = .failed; twenty[6].position = nil
        twenty[18].state = .retrying; twenty[18].position = nil
        XCTAssertEqual(StageStatus(elapsed: 12, views: twenty).compactLine(width: 120),
                       "[  12.0s] 20 views: PLAYING 1-6,8-18,20 0:03-0:04/0:24 | FAILED 7 | RETRYING 19")
        let shortened = StageStatus(elapsed: 1, views: Array(five.views.prefix(4))).compactLine(width: 120)
        XCTAssertLessThanOrEqual(shortened.count, 120, shortened)
        XCTAssertTrue(shortened.contains("1 came"), shortened)
        XCTAssertTrue(shortened.contains("…"), shortened)
    }

    func testTheTerminalBlockIsOneClippedLinePerViewUnderAHeader() {
        let lines = four.lines(width: 60)
        XCTAssertEqual(lines.count, 5)
        XCTAssertEqual(lines[0], "[   3.0s] 4 views")
        XCTAssertTrue(lines[1].hasPrefix("1 angle1-wide.mp4     PLAYING   0:03/0:24 [high"), lines[1])
        XCTAssertEqual(lines[3], "3 angle3/master.m3u8  RETRYING")
        for line in lines { XCTAssertLessThanOrEqual(line.count, 60, line) }
    }

    func testShortTimes() {
        XCTAssertEqual(StageStatus.shortTime(.seconds(3.9)), "0:03")
        XCTAssertEqual(StageStatus.shortTime(.seconds(3723)), "1:02:03")
    }
}
