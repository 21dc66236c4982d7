import Foundation
import TestSupport
import XCTest

/// `PulseTimingTap` reads pulsesink's timing lines through GStreamer's debug log, with the `pulse` category raised to
/// LOG; what the user sees on stderr must not change: no line without GST_DEBUG, exactly what GST_DEBUG asks for
/// with it. A real `multiview play --coordinated` of two views with PulseAudio output (the test sink).
final class PulseTimingLogOutputTests: XCTestCase {
    private var binary: String { TestMedia.root.appendingPathComponent(".build/debug/multiview").path }

    private func play(debug: String?) throws -> ToolResult {
        var environment = ProcessInfo.processInfo.environment
        environment["GST_DEBUG"] = debug
        environment["GST_DEBUG_NO_COLOR"] = "1"
        environment["GST_DEBUG_FILE"] = nil
        return try runTool([binary, "play", "--headless", "--coordinated", "--duration", "2",
                            TestMedia.angle1, TestMedia.path("angle4-overhead.mp4")], environment: environment)
    }

    func testTheTapPrintsOnlyWhatGSTDEBUGAsksFor() throws {
        try Services.requirePulseAudio()
        guard FileManager.default.isExecutableFile(atPath: binary) else { return XCTFail("\(binary) not built") }

        let quiet = try play(debug: nil)
        XCTAssertEqual(quiet.status, 0, quiet.output)
        XCTAssertFalse(quiet.stderr.contains("latency_update"), "a timing line the user did not ask for:\n\(quiet.stderr)")
        XCTAssertFalse(quiet.stderr.contains(" LOG "), "a LOG line the user did not ask for:\n\(quiet.stderr)")
        XCTAssertTrue(quiet.stdout.contains("PLAYING"), "the views did not play: \(quiet.output)")

        // Up to DEBUG for pulse: its DEBUG lines, none of the LOG lines the tap raised the category for.
        let debug = try play(debug: "pulse:5")
        XCTAssertEqual(debug.status, 0, debug.output)
        XCTAssertTrue(debug.stderr.contains(" DEBUG "), "GST_DEBUG=pulse:5 printed no DEBUG line")
        XCTAssertFalse(debug.stderr.contains(" LOG "), "GST_DEBUG=pulse:5 printed LOG lines")

        // Asked for LOG: pulsesink's timing lines are printed as before the tap.
        let log = try play(debug: "pulse:6")
        XCTAssertEqual(log.status, 0, log.output)
        XCTAssertTrue(log.stderr.contains("latency_update"), "GST_DEBUG=pulse:6 lost pulsesink's timing lines")
    }
}
