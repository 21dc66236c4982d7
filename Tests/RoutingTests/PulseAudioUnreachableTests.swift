import XCTest
@testable import Routing

/// The libpulse client's answer when no server is there (no daemon needed: the socket does not exist).
final class PulseAudioUnreachableTests: XCTestCase {
    func testAnAbsentServerIsOneClearError() async {
        do {
            _ = try await PulseAudioClient.connect(server: "unix:/nonexistent/multiview/native")
            XCTFail("connected to a server that does not exist")
        } catch {
            guard case .unreachable(let code) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, .connectionRefused, "\(error)")
            XCTAssertTrue("\(error)".hasPrefix("PulseAudio is not reachable"))
        }
    }
}
