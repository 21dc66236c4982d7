import XCTest
@testable import Multiview

/// `LanguagePreferences`: which language tags name the same language, and the one error line a wish that cannot
/// be met prints. Pure: no pipeline (the stream choice itself is `Player`'s and tested with media).
final class LanguagePreferencesTests: XCTestCase {
    func testTwoAndThreeLetterCodesOfOneLanguageMatch() {
        for tag in ["fr", "fre", "fra", "FR", "Fra"] {
            XCTAssertTrue(LanguagePreferences.matches(tag, "fr"), tag)
            XCTAssertTrue(LanguagePreferences.matches("fr", tag), "symmetric: \(tag)")
        }
        XCTAssertTrue(LanguagePreferences.matches("fre", "fra"), "two aliases of one language")
        XCTAssertTrue(LanguagePreferences.matches("ger", "deu"))
        XCTAssertTrue(LanguagePreferences.matches("dut", "nl"))
        XCTAssertTrue(LanguagePreferences.matches("eng", "EN"))
        XCTAssertTrue(LanguagePreferences.matches("pol", "pol"), "an unknown code matches itself")
    }

    func testOtherLanguagesAndMissingTagsDoNotMatch() {
        XCTAssertFalse(LanguagePreferences.matches("en", "fr"))
        XCTAssertFalse(LanguagePreferences.matches("eng", "fre"))
        XCTAssertFalse(LanguagePreferences.matches("de", "nl"))
        XCTAssertFalse(LanguagePreferences.matches(nil, "en"), "a stream without a language tag")
        XCTAssertFalse(LanguagePreferences.matches("und", "en"))
        XCTAssertFalse(LanguagePreferences.matches("pol", "pl"), "only the listed aliases are known")
    }

    func testDefaultsAreNoWish() {
        let preferences = LanguagePreferences()
        XCTAssertNil(preferences.audio)
        XCTAssertEqual(preferences.subtitles, .automatic)
        XCTAssertNotEqual(LanguagePreferences(subtitles: .off), preferences)
        XCTAssertNotEqual(LanguagePreferences(audio: "fr"), preferences)
    }

    func testErrorLinesNameTheViewAndTheCause() {
        let view = ViewIdentity(number: 2, name: "angle2.mp4")
        XCTAssertEqual(LanguageSelectionError.noSuchLanguage(view: view, kind: "audio", language: "de",
                                                             available: ["en", "fr"]).description,
                       "view 2 (angle2.mp4): no audio track in language 'de' (available: en, fr)")
        XCTAssertEqual(LanguageSelectionError.noSuchLanguage(view: view, kind: "subtitle", language: "en",
                                                             available: []).description,
                       "view 2 (angle2.mp4): no subtitle track in language 'en' (available: none)")
        XCTAssertEqual(LanguageSelectionError.noStreamCollection(view: view).description,
                       "view 2 (angle2.mp4): no streams known yet (not loaded)")
        XCTAssertEqual(LanguageSelectionError.refused(view: view).description,
                       "view 2 (angle2.mp4): the pipeline refused the stream selection")
    }
}
