import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15 row 2 (row 1 is `RouteSwapClockTests`): whatever PulseAudio does to a view's stream, the view's
/// video never stops. Real pipeline, the test's PulseAudio daemon (a null sink with no recorder on it: an idle
/// null sink renders up to 2 s ahead, and a new stream waits behind that). With pulsesink as the pipeline clock
/// (GStreamer's default for an uncoordinated view) the view's position stood still ~1.8 s near 1.9 s of media and
/// its status said BUFFERING 0%. A freeze is judged by the view's own position (`PositionWatch`).
final class ClockModelTests: XCTestCase {
    /// Longer than any scheduling hiccup of a busy two-core machine, far shorter than the 1–2 s freezes.
    private let longestAllowedStandStill: Duration = .milliseconds(600)

    /// Row 2: one uncoordinated local view into PulseAudio used to stand still ~1–2 s near 1.9 s of media.
    func testALocalViewIntoPulseAudioPlaysItsFirstSecondsWithoutStandingStill() async throws {
        try Services.requirePulseAudio()
        let player = try makePlayer(1, name: "clock-model-\(getpid())", audio: .pulse(device: nil))
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        // Past the 1.9 s mark with room to spare (events, not wall time: until 4.5 s of media were played).
        let watch = await PositionWatch.sample(player, until: .seconds(4.5), timeout: .seconds(20))
        let statuses = await log.statuses
        XCTAssertTrue(watch.reached, "the view did not play to 4.5 s within 20 s: \(watch) statuses \(statuses)")
        XCTAssertLessThan(watch.longestStandStill, longestAllowedStandStill,
                          "the view stood still: \(watch); statuses \(statuses)")
        let stalls = statuses.filter { $0.state == .buffering }
        XCTAssertTrue(stalls.isEmpty, "a local file showed buffering: \(stalls)")
        await player.stop()
    }
}

extension PositionWatch {
    /// One player's position until it reaches `target`.
    static func sample(_ player: Player, until target: ClockTime, timeout: Duration) async -> PositionWatch.View {
        await PositionWatch.sample(targets: [target.seconds], timeout: timeout) { _ in
            await player.queryPosition()?.seconds
        }.views[0]
    }
}
