import CPulse
import XCTest
@testable import Routing

/// libpulse's error numbers become typed codes in one place (pure: no server).
final class PulseErrorCodeTests: XCTestCase {
    func testLibpulseErrorNumbersMapToTypedCodes() {
        func code(_ raw: pa_error_code_t) -> PulseErrorCode { PulseErrorCode(pulseErrno: Int32(raw.rawValue)) }
        XCTAssertEqual(code(PA_ERR_NOENTITY), .noSuchEntity)
        XCTAssertEqual(code(PA_ERR_ACCESS), .accessDenied)
        XCTAssertEqual(code(PA_ERR_CONNECTIONREFUSED), .connectionRefused)
        XCTAssertEqual(code(PA_ERR_CONNECTIONTERMINATED), .connectionTerminated)
        XCTAssertEqual(code(PA_ERR_MODINITFAILED), .moduleInitFailed)
        XCTAssertEqual(PulseErrorCode(pulseErrno: 999), .other(999))
    }

    func testErrorsReadAsOneLineNamingTheRequest() {
        let error = PulseAudioError.failed(.move(sinkInput: 7, sink: "living"), .noSuchEntity)
        XCTAssertEqual("\(error)", "PulseAudio refused to move stream 7 to living: no such entity")
        XCTAssertTrue(error.isNoSuchEntity)
        XCTAssertFalse(PulseAudioError.disconnected.isNoSuchEntity)
        XCTAssertEqual("\(RoutingEvent.failed(.pulseAudio(error)))", "routing: PulseAudio refused to move stream 7 to living: no such entity")
        XCTAssertEqual("\(RoutingError.noSuchSink("den", available: ["a", "b"]))", "no PulseAudio sink named 'den' (sinks: a, b)")
    }
}
