import XCTest
@testable import Multiview

/// What an mpv / VLC user types (issue 16): help, seek syntax, volume and mute, the window's keys. Pure: parsing and
/// text only, no pipeline, no daemon (milliseconds).
final class StageCommandHabitsTests: XCTestCase {
    func testHelpParsesFromStdinAndTheUnknownCommandLinePointsAtIt() {
        for line in ["help", "?", "h", " HELP "] { XCTAssertEqual(StageCommand.parse(line), .help, line) }
        guard case .failure(let error) = StageCommand.read("dance") else { return XCTFail("dance parsed") }
        XCTAssertEqual("\(error)", "unknown command 'dance'; type help for the commands")
    }

    func testEveryCommandTheHelpNamesParses() {
        // Rows name placeholders (N, URI) and alternatives (a, b / en|off); each concrete form must parse.
        let concrete: [String: [String]] = [
            "p": ["p", "play", "pause"], "seek 1:23": ["seek 1:23", "seek 42.5", "seek 1:02:03"],
            "seek +5, seek -5": ["seek +5", "seek -5", "+10", "-1:30"], "rate 2": ["rate 2"],
            "volume 80": ["volume 80"], "volume N 50": ["volume 2 50", "volume +10", "volume -10"],
            "mute, mute N": ["mute", "mute 2"], "lang N audio fr": ["lang 2 audio fr"],
            "subs N en|off": ["subs 2 en", "subs 2 off"], "r N": ["r 2"], "add URI": ["add file:///x.mp4"],
            "priority N high": ["priority 2 high"], "audio N, external N": ["audio 2", "external 2"],
            "ff N, rew N": ["ff 2", "rew 2"], "preview N 12 f.png": ["preview 2 12 f.png"], "s": ["s"],
            "help": ["help", "?", "h"], "q": ["q"],
        ]
        XCTAssertEqual(Set(StageHelp.commands.map(\.input)), Set(concrete.keys), "every help row is checked here")
        for (row, lines) in concrete {
            for line in lines {
                if case .failure(let error) = StageCommand.read(line) { XCTFail("\(row): '\(line)': \(error)") }
            }
        }
        let text = StageHelp.text
        XCTAssertTrue(text.hasPrefix("keys in the window:\n"), text)
        XCTAssertTrue(text.contains("\ncommands on stdin:\n"), text)
        XCTAssertLessThanOrEqual(text.split(separator: "\n").map(\.count).max() ?? 0, 100, "fits 100 columns")
        XCTAssertLessThan(StageCommand.summary.count, 200)
    }

    func testSeekTakesClockTimesAndASignMakesItRelative() throws {
        XCTAssertEqual(StageCommand.parse("seek 1:23"), .seekTo(83))
        XCTAssertEqual(StageCommand.parse("seek 0:12"), .seekTo(12))
        XCTAssertEqual(StageCommand.parse("seek 1:02:03.5"), .seekTo(3723.5))
        XCTAssertEqual(StageCommand.parse("seek 90:00"), .seekTo(5400), "the first part may exceed 59")
        XCTAssertEqual(StageCommand.parse("seek 42.5"), .seekTo(42.5))
        XCTAssertEqual(StageCommand.parse("seek +5"), .seekBy(5))
        XCTAssertEqual(StageCommand.parse("seek -5"), .seekBy(-5))
        XCTAssertEqual(StageCommand.parse("seek -1:30"), .seekBy(-90))
        XCTAssertEqual(StageCommand.parse("+10"), .seekBy(10))
        XCTAssertEqual(StageCommand.parse("-10"), .seekBy(-10))
        XCTAssertEqual(StageCommand.parse("+0:05"), .seekBy(5))
        for bad in ["seek 1:60", "seek 1:75:00", "seek 1::2", "seek :30", "seek 1:-2", "seek 1:2:3:4", "seek abc", "-x"] {
            guard case .failure(let error) = StageCommand.read(bad) else { XCTFail("'\(bad)' parsed"); continue }
            XCTAssertEqual(error, .malformed(input: bad, expected: "a time: 42.5, 1:23 or 1:02:03 (absolute), +5 or -1:30 (relative)"))
        }
        XCTAssertThrowsError(try StageLimits.seek("1e309", input: "seek 1e309")) { error in
            XCTAssertEqual("\(error)", "seek 1e309: not a finite number; allowed: 0…604800 s")
        }
        XCTAssertThrowsError(try StageLimits.seek("+200:00:00", input: "seek +200:00:00")) { error in
            XCTAssertEqual("\(error)", "seek +200:00:00: out of range; allowed: -604800…+604800 s")
        }
        XCTAssertEqual(StageCommand.seekTo(83).typed, "seek 83")
        XCTAssertEqual(StageCommand.seekBy(-5).typed, "-5")
    }

    func testVolumeAndMuteCommands() throws {
        XCTAssertEqual(StageCommand.parse("volume 80"), .setVolume(view: nil, percent: 80))
        XCTAssertEqual(StageCommand.parse("volume 2 50"), .setVolume(view: 2, percent: 50))
        XCTAssertEqual(StageCommand.parse("vol 1 0"), .setVolume(view: 1, percent: 0))
        XCTAssertEqual(StageCommand.parse("volume +10"), .changeVolume(by: 10))
        XCTAssertEqual(StageCommand.parse("volume -5"), .changeVolume(by: -5))
        XCTAssertEqual(StageCommand.parse("mute"), .toggleMute(view: nil))
        XCTAssertEqual(StageCommand.parse("m"), .toggleMute(view: nil))
        XCTAssertEqual(StageCommand.parse("mute 3"), .toggleMute(view: 3))
        XCTAssertEqual(StageCommand.setVolume(view: 2, percent: 50).typed, "volume 2 50")
        XCTAssertEqual(StageCommand.setVolume(view: nil, percent: 80).typed, "volume 80")
        XCTAssertEqual(StageCommand.changeVolume(by: -10).typed, "volume -10")
        XCTAssertEqual(StageCommand.toggleMute(view: 3).typed, "mute 3")
        XCTAssertEqual(StageCommand.toggleMute(view: 3).view, 3)
        XCTAssertNil(StageCommand.changeVolume(by: 10).view)
        let refused: [(String, String)] = [
            ("volume 200", "volume 200: out of range; allowed: 0…150 (percent)"),
            ("volume 1 -5", "volume 1 -5: out of range; allowed: 0…150 (percent)"),
            ("volume nan", "volume nan: not a finite number; allowed: 0…150 (percent)"),
            ("volume +500", "volume +500: out of range; allowed: -150…+150 (percent points)"),
            ("volume 0 50", "volume 0 50: out of range; allowed: view numbers from 1"),
            ("mute x", "mute x: expected a view number (1, 2, …)"),
            ("volume loud", "volume loud: expected a number"),
        ]
        for (line, message) in refused {
            guard case .failure(let error) = StageCommand.read(line) else { XCTFail("'\(line)' parsed"); continue }
            XCTAssertEqual("\(error)", message)
        }
    }

    func testWindowKeys() {
        // Latin-1 keysyms are their characters' codes; the others from X11's keysymdef.h.
        let keys: [(Int32, StageCommand?)] = [
            (0x20, .togglePause), (0xff51, .seekBy(-10)), (0xff53, .seekBy(10)), (0x71, .quit), (0xff1b, .quit),
            (0x6d, .toggleMute(view: nil)), (0x2f, .changeVolume(by: -10)), (0x2a, .changeVolume(by: 10)),
            (0xffaf, .changeVolume(by: -10)), (0xffaa, .changeVolume(by: 10)),
            (0x3f, .help), (0x68, .help), (0x31, .priority(view: 1, level: "next")),
            (0x39, .priority(view: 9, level: "next")), (0x7a, nil),
        ]
        for (key, command) in keys {
            XCTAssertEqual(GridWindow.command(forKey: key), command, String(key, radix: 16))
        }
    }

    func testControlCharactersAreQuotedVisibly() {
        XCTAssertEqual(StageCommand.printable("\u{1B}[A"), "^[[A")
        XCTAssertEqual(StageCommand.printable("a\u{07}b\u{7F}\u{9B}c é"), "a^Gb^?\\u{9B}c é")
        guard case .failure(let error) = StageCommand.read("\u{1B}[A") else { return XCTFail("parsed") }
        XCTAssertEqual(StageCommand.printable("\(error)"), "unknown command '^[[A'; type help for the commands")
    }

    func testLanguagesMustNameALanguage() throws {
        for code in ["en", "fr", "deu", "ger", "jpn", "EN"] {
            XCTAssertEqual(try StageLimits.language(code, input: code), code)
        }
        for code in ["zz", "zzz", "xx", "und", "e", "english", "e1", ""] {
            XCTAssertThrowsError(try StageLimits.language(code, input: "--audio-lang \(code)"), code) { error in
                XCTAssertEqual("\(error)", "--audio-lang \(code): expected a language code (ISO 639), e.g. en, fr, deu")
            }
        }
        XCTAssertEqual(StageCommand.parse("lang 1 audio fr"), .audioLanguage(view: 1, language: "fr"))
        XCTAssertEqual(StageCommand.parse("subs 2 off"), .subtitles(view: 2, language: nil))
        guard case .failure(let error) = StageCommand.read("subs 2 xx") else { return XCTFail("subs 2 xx parsed") }
        XCTAssertEqual("\(error)", "subs 2 xx: expected a language code (ISO 639), e.g. en, fr, deu")
    }

    func testAudioLevelLabels() {
        XCTAssertNil(Player.AudioLevel(volume: 1, muted: false).label, "the media's own level: nothing to show")
        XCTAssertEqual(Player.AudioLevel(volume: 0.5, muted: false).label, "vol 50%")
        XCTAssertEqual(Player.AudioLevel(volume: 0.5, muted: true).label, "muted")
        XCTAssertEqual(Stage.levelText(Player.AudioLevel(volume: 0.8, muted: true)), "80% muted")
    }
}
