import GStreamer
import TestSupport
import XCTest
@testable import Multiview

/// A stream's language tag can reach it after every message that listed the streams: parsebin stores a tag event
/// on its stream when the event passes, and a sparse subtitle stream's event can pass after the collection and the
/// last STREAMS_SELECTED were posted. `subs N en` then found only "und" and refused (a cold-run failure of
/// SubtitleToggleTests: "no subtitle track in language 'en' (available: und)"). The player reads the collection's
/// tags again before it refuses.
final class LateLanguageTagTests: XCTestCase {
    func testALanguageTaggedAfterTheMessagesIsStillFound() async throws {
        let player = try makePlayer(1, name: "late-tag")
        try await player.load(MediaSource(TestMedia.path("angle3-right.mkv")))
        try await player.play()
        let playing = await eventually(timeout: .seconds(10)) { (await player.queryPosition() ?? .zero) >= .milliseconds(500) }
        XCTAssertTrue(playing, "the view did not start")

        // What the player knew from the messages when the tag came late: no language on any stream.
        await player.forgetLanguagesFromMessages()
        let unknown = await player.subtitleOptions
        XCTAssertFalse(unknown.isEmpty, "angle3-right.mkv has a subtitle stream")
        XCTAssertTrue(unknown.allSatisfy { $0.language == nil }, "\(unknown)")

        try await player.selectSubtitles(.language("en"))
        let options = await player.subtitleOptions
        XCTAssertTrue(options.contains { $0.language == "en" }, "the English tag was not learned from the collection: \(options)")
        let shown = await eventually(timeout: .seconds(5)) {
            let selected = await player.selectedStreams
            let shown = await player.subtitlesShown
            return shown && selected.contains { $0.kind == .text }
        }
        XCTAssertTrue(shown, "the English subtitles were not shown")
        await player.stop()
    }

    /// The same for the selection: STREAMS_SELECTED can be posted before the subtitle stream's tag, and `subs N
    /// off` then `subs N en` sends no new selection. The selected stream is still named in its language.
    func testTheSelectionNamesALanguageTaggedAfterItsMessage() async throws {
        let player = try makePlayer(1, name: "late-tag-selection")
        try await player.load(MediaSource(TestMedia.path("angle3-right.mkv")))
        try await player.play()
        let selected = await eventually(timeout: .seconds(10)) { await player.selectedStreams.contains { $0.kind == .text } }
        XCTAssertTrue(selected, "angle3-right.mkv's subtitle stream was not selected")

        // What the player knew when the tag came after both messages: no language on any stream.
        await player.forgetLanguagesFromMessages()
        await player.forgetSelectionLanguages()
        try await player.selectSubtitles(.off)
        try await player.selectSubtitles(.language("en"))
        let text = await player.selectedStreams.filter { $0.kind == .text }
        XCTAssertEqual(text.map(\.language), ["en"], "the selected subtitle stream is not named English: \(text)")
        await player.stop()
    }
}

extension Player {
    /// The selection as a STREAMS_SELECTED posted before the tag listed it: no language known.
    func forgetSelectionLanguages() {
        currentSelection = currentSelection.map { stream in
            var untagged = stream
            untagged.language = nil
            return untagged
        }
    }

    /// The state a late tag leaves: the streams as the messages listed them, with no language known.
    func forgetLanguagesFromMessages() {
        streamCollection = streamCollection.map { stream in
            var untagged = stream
            untagged.language = nil
            return untagged
        }
    }
}
