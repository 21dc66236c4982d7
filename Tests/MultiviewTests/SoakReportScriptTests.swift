import TestSupport
import XCTest

/// The soak's verdict (`Scripts/lib/soak_report.py`) must not miss a dead view or a dead player: its own Python
/// tests (`Scripts/lib/test_soak_report.py`, synthetic logs, no player or daemon) run here so the suite keeps them
/// green. They fail on the report before issue 15's fix for a view that never plays, a view PLAYING without a
/// position, a RETRYING view (counted only by accident, as "missing") and the player dying mid-run (0 frozen).
final class SoakReportScriptTests: XCTestCase {
    func testTheSoakReportCountsDeadViewsAndADeadPlayerAsFrozen() throws {
        let script = repoRoot.appendingPathComponent("Scripts/lib/test_soak_report.py").path
        let result = try runTool("python3", [script], timeout: .seconds(60))
        XCTAssertEqual(result.status, 0, "test_soak_report.py failed:\n\(result.output.suffix(6000))")
        XCTAssertTrue(result.stderr.contains("OK"), "no unittest summary:\n\(result.output.suffix(3000))")
    }
}
