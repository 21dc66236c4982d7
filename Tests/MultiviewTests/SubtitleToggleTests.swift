import Foundation
import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// Issue 15 row 4: turning a view's subtitles off and on again (`subs N off` then `subs N en`, or `--subtitles off`
/// then `subs N en`) froze the view at "buffering 0%" until a seek: the subtitle stream was deselected, and when
/// it was selected again its overlay held every video frame waiting for text that never came. Real pipeline:
/// angle3 (Matroska, English subtitles), fake sinks.
final class SubtitleToggleTests: XCTestCase {
    func testSubtitlesOffThenOnKeepsTheViewPlaying() async throws {
        let player = try makePlayer(1, name: "subs-toggle")
        let log = await EventLog(player)
        try await player.load(MediaSource(TestMedia.path("angle3-right.mkv")))
        try await player.play()
        let playing = await eventually(timeout: .seconds(10)) { (await player.queryPosition() ?? .zero) >= .seconds(1) }
        XCTAssertTrue(playing, "the view did not start")
        let shownAtStart = await player.subtitlesShown
        XCTAssertTrue(shownAtStart, "angle3's English subtitles are shown by default")

        let firstToggle = await log.statuses.count
        try await player.selectSubtitles(.off)
        let hidden = await player.subtitlesShown
        XCTAssertFalse(hidden, "subs off left the subtitles shown")
        try await Task.sleep(for: .milliseconds(500))   // the view plays on without them a while
        try await showEnglishAndCheckTheViewPlaysOn(player, log, statusesFromTheFirstToggle: firstToggle)
    }

    func testSubtitlesOffFromTheStartThenOnKeepsTheViewPlaying() async throws {
        let player = try makePlayer(1, name: "subs-off-start")
        let log = await EventLog(player)
        try await player.setLanguagePreferences(LanguagePreferences(subtitles: .off))
        try await player.load(MediaSource(TestMedia.path("angle3-right.mkv")))
        try await player.play()
        let playing = await eventually(timeout: .seconds(10)) { (await player.queryPosition() ?? .zero) >= .seconds(1) }
        XCTAssertTrue(playing, "the view did not start")
        let hidden = await player.subtitlesShown
        XCTAssertFalse(hidden, "--subtitles off showed subtitles")
        try await showEnglishAndCheckTheViewPlaysOn(player, log, statusesFromTheFirstToggle: await log.statuses.count)
    }

    /// `subs N en`, then: English subtitles shown, media time moves on with the wall clock and the view never
    /// shows buffering from the first toggle on. (Before it, the start: a view that falls 500 ms behind on two
    /// loaded cores shows the starvation watch's BUFFERING, which is not what this test is about.)
    private func showEnglishAndCheckTheViewPlaysOn(_ player: Player, _ log: EventLog,
                                                   statusesFromTheFirstToggle first: Int) async throws {
        try await player.selectSubtitles(.language("en"))
        let on = await eventually(timeout: .seconds(5)) {
            let shown = await player.subtitlesShown, selected = await player.selectedStreams
            return shown && selected.contains { $0.kind == .text && $0.language == "en" }
        }
        XCTAssertTrue(on, "the English subtitles were not shown again")

        let before = await player.queryPosition() ?? .zero
        let started = ContinuousClock.now
        let advanced = await eventually(timeout: .seconds(10)) { (await player.queryPosition() ?? .zero) >= before + .seconds(2) }
        let wall = (ContinuousClock.now - started) / .seconds(1)
        let position = await player.queryPosition() ?? .zero
        XCTAssertTrue(advanced, "the view stopped after its subtitles came back (at \(position), from \(before))")
        XCTAssertLessThan(wall, 3.5, "2 s of media took \(wall) s of wall time")
        let statuses = await log.statuses
        let beforeToggle = statuses.prefix(first), fromToggle = statuses.dropFirst(first)
        let stalls = fromToggle.filter { $0.state == .buffering }
        XCTAssertTrue(stalls.isEmpty, "toggling the subtitles showed as buffering: \(stalls) (statuses before the " +
                                      "first toggle: \(beforeToggle.map(\.state)), after: \(fromToggle.map(\.state)))")
        await player.stop()
    }
}
