import Multiview
@testable import Priority
import XCTest

/// `PriorityViewReport.label` (the tile tag and a view's part of the status line) and `Rung`'s text. Pure.
final class PriorityViewReportTests: XCTestCase {
    private let view = ViewIdentity(number: 1, name: "angle1/master.m3u8")
    private let low = Rung(bandwidth: 800_000, width: 640, height: 360)
    private let top = Rung(bandwidth: 5_500_000, width: 1920, height: 1080)

    private func report(_ priority: NetworkResourcePriority = .high, current: Rung?, rungs: Int = 4,
                        allocated: Rung? = nil, link: LinkFigure? = nil) -> PriorityViewReport {
        PriorityViewReport(view: view, priority: priority, currentRung: current, currentRungIndex: nil,
                           rungCount: rungs, allocated: allocated, measuredBandwidth: 0, link: link)
    }

    func testRungText() {
        XCTAssertEqual(top.description, "1920x1080 5.5M")
        XCTAssertEqual(low.description, "640x360 800k")
        XCTAssertEqual(Rung(bandwidth: 2_000_000).description, "?x? 2.0M", "no RESOLUTION in the playlist")
        XCTAssertEqual(Rung(bandwidth: 2_000_000, width: 640).description, "?x? 2.0M")
    }

    func testLabelShowsPriorityAndTheRungShown() {
        XCTAssertEqual(report(current: top, allocated: top).label, "high 1920x1080 5.5M")
        XCTAssertEqual(report(.low, current: low).label, "low 640x360 800k")
    }

    func testLabelBeforeTheFirstFrame() {
        XCTAssertEqual(report(.default, current: nil).label, "default …", "an HLS view not showing a rung yet")
        XCTAssertEqual(report(.default, current: nil, rungs: 0).label, "default", "not an HLS view")
    }

    func testACapOtherThanTheRungShownIsNamed() {
        XCTAssertEqual(report(current: top, allocated: low).label, "high 1920x1080 5.5M (cap 800k)")
        XCTAssertEqual(report(current: nil, allocated: top).label, "high … (cap 5.5M)")
    }

    func testTheLinkFigureFollowsOnTheViewThatCarriesIt() {
        XCTAssertEqual(report(current: top, allocated: top, link: .estimated(6_800_000)).label,
                       "high 1920x1080 5.5M · link ~6.8M (est)")
        XCTAssertEqual(report(.low, current: low, allocated: top, link: .given(6_300_000)).label,
                       "low 640x360 800k (cap 5.5M) · link 6.3M (given)")
        XCTAssertEqual(report(current: nil, link: .measuring(nil)).label, "high … · link ? (measuring)")
    }
}
