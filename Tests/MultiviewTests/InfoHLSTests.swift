import Foundation
import TestSupport
import XCTest

/// `multiview info` on an HLS master said `application/x-hls` and languages `und, und` though the playlist
/// declares en and fr. Through the built binary on the generated HLS fixture.
final class InfoHLSTests: XCTestCase {
    func testInfoOnAnHLSMasterNamesThePlaylistsLanguages() throws {
        try HLSFixture.ensure()
        let binary = TestMedia.root.appendingPathComponent(".build/debug/multiview").path
        let result = try runTool(binary, ["info", HLSFixture.root + "/angle1/master.m3u8"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("  container: HLS multi-variant playlist (4 variants)\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains(", language en\n") && result.stdout.contains(", language fr\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("  audio languages: en (default), fr  "), result.stdout)
        XCTAssertFalse(result.stdout.contains("und"), result.stdout)
    }
}
