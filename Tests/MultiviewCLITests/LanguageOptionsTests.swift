import Multiview
import XCTest
@testable import MultiviewCLI

/// `play`'s `--audio-lang` / `--subtitles` options as language preferences. Pure.
final class LanguageOptionsTests: XCTestCase {
    func testNoOptionsAreNoWish() throws {
        XCTAssertEqual(try LanguageOptions.parse([]).preferences, LanguagePreferences())
    }

    func testAudioAndSubtitleLanguages() throws {
        let options = try LanguageOptions.parse(["--audio-lang", "fr", "--subtitles", "en"])
        XCTAssertEqual(options.preferences, LanguagePreferences(audio: "fr", subtitles: .language("en")))
    }

    func testSubtitlesOffInAnyCase() throws {
        XCTAssertEqual(try LanguageOptions.parse(["--subtitles", "off"]).preferences.subtitles, .off)
        XCTAssertEqual(try LanguageOptions.parse(["--subtitles", "OFF"]).preferences.subtitles, .off)
        XCTAssertEqual(try LanguageOptions.parse(["--subtitles", "offline"]).preferences.subtitles, .language("offline"))
        XCTAssertNil(try LanguageOptions.parse(["--subtitles", "off"]).preferences.audio)
    }
}
