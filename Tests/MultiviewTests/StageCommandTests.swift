import Multiview
import XCTest

/// `StageCommand`: every stdin command and window key as typed, its text read back as the same command, the view it
/// names, and the one line a bad line gets. Pure (the ranges themselves are `StageLimitsTests`').
final class StageCommandTests: XCTestCase {
    private func read(_ line: String) -> StageCommand? { try? StageCommand.read(line).get() }
    private func failure(_ line: String) -> StageInputError? {
        if case .failure(let error) = StageCommand.read(line) { return error }
        return nil
    }

    func testEveryCommandAsTyped() {
        let cases: [(String, StageCommand)] = [
            ("p", .togglePause), ("space", .togglePause), ("toggle", .togglePause),
            ("play", .play), ("pause", .pause), ("PAUSE", .pause),
            ("q", .quit), ("quit", .quit), ("exit", .quit), ("s", .status), ("status", .status),
            ("+10", .seekBy(10)), ("-2.5", .seekBy(-2.5)), ("seek +3", .seekBy(3)), ("seek -3", .seekBy(-3)),
            ("seek 42.5", .seekTo(42.5)), ("rate 2", .rate(2)), ("rate 0.125", .rate(0.125)),
            ("r 3", .whatHappened(3)), ("add http://host/a/master.m3u8", .add("http://host/a/master.m3u8")),
            ("priority 2 HIGH", .priority(view: 2, level: "high")), ("priority 1 next", .priority(view: 1, level: "next")),
            ("audio 2", .preferAudio(2)), ("audio none", .preferAudio(nil)), ("audio 0", .preferAudio(nil)),
            ("audio -", .preferAudio(nil)), ("external 1", .preferExternal(1)), ("external NONE", .preferExternal(nil)),
            ("lang 2 audio fr", .audioLanguage(view: 2, language: "fr")),
            ("lang 1 AUDIO en", .audioLanguage(view: 1, language: "en")),
            ("subs 1 en", .subtitles(view: 1, language: "en")), ("subs 1 OFF", .subtitles(view: 1, language: nil)),
            ("ff 2", .trickPlay(view: 2, rate: 8)), ("rew 1", .trickPlay(view: 1, rate: -8)),
            ("preview 1 12.5 /tmp/p.png", .preview(view: 1, seconds: 12.5, path: "/tmp/p.png")),
            ("  seek\t42.5  ", .seekTo(42.5)),
        ]
        for (line, expected) in cases {
            XCTAssertEqual(read(line), expected, "'\(line)'")
            XCTAssertEqual(StageCommand.parse(line), expected, "'\(line)'")
        }
    }

    func testTypedTextReadsBackAsTheSameCommand() {
        let commands: [StageCommand] = [
            .togglePause, .play, .pause, .seekBy(10), .seekBy(-2.5), .seekBy(0), .seekTo(42.5), .seekTo(0),
            .rate(0.125), .rate(2), .status, .quit, .whatHappened(3), .add("/media/a.mp4"),
            .priority(view: 2, level: "low"), .preferAudio(2), .preferAudio(nil), .preferExternal(1),
            .preferExternal(nil), .audioLanguage(view: 2, language: "fr"), .subtitles(view: 1, language: "en"),
            .subtitles(view: 1, language: nil), .trickPlay(view: 2, rate: 8), .trickPlay(view: 1, rate: -8),
            .preview(view: 1, seconds: 12.5, path: "/tmp/p.png"),
        ]
        for command in commands {
            XCTAssertEqual(read(command.typed), command, "'\(command.typed)'")
        }
        XCTAssertEqual(StageCommand.seekBy(10).typed, "+10")
        XCTAssertEqual(StageCommand.seekBy(-2.5).typed, "-2.5")
        XCTAssertEqual(StageCommand.preferAudio(nil).typed, "audio none")
        XCTAssertEqual(StageCommand.trickPlay(view: 1, rate: -8).typed, "rew 1")
    }

    func testTheViewACommandNames() {
        XCTAssertEqual(StageCommand.whatHappened(3).view, 3)
        XCTAssertEqual(StageCommand.priority(view: 2, level: "high").view, 2)
        XCTAssertEqual(StageCommand.subtitles(view: 4, language: nil).view, 4)
        XCTAssertEqual(StageCommand.preview(view: 5, seconds: 1, path: "p.png").view, 5)
        XCTAssertEqual(StageCommand.preferExternal(2).view, 2)
        XCTAssertNil(StageCommand.preferAudio(nil).view)
        for command: StageCommand in [.play, .pause, .togglePause, .seekBy(1), .seekTo(1), .rate(2), .status, .quit, .add("x")] {
            XCTAssertNil(command.view, "\(command)")
        }
        XCTAssertTrue(StageCommand.preferAudio(1).isRoutePreference)
        XCTAssertTrue(StageCommand.preferExternal(nil).isRoutePreference)
        XCTAssertFalse(StageCommand.audioLanguage(view: 1, language: "fr").isRoutePreference)
    }

    func testBadLinesSayWhatIsWrong() {
        XCTAssertEqual(failure(""), .unknownCommand(""))
        XCTAssertEqual(failure("  "), .unknownCommand(""))
        XCTAssertEqual(failure("jump 3"), .unknownCommand("jump 3"))
        XCTAssertEqual(failure("play now"), .unknownCommand("play now"), "extra words are no command")
        XCTAssertEqual(failure("lang 1 video fr"), .unknownCommand("lang 1 video fr"))
        XCTAssertEqual(failure("r x"), .malformed(input: "r x", expected: "a view number (1, 2, …)"))
        XCTAssertEqual(failure("ff 0"), .outOfRange(input: "ff 0", allowed: "view numbers from 1"))
        XCTAssertEqual(failure("audio -1"), .outOfRange(input: "audio -1", allowed: "view numbers from 1"))
        XCTAssertEqual(failure("seek ten")?.description,
                       "seek ten: expected a time: 42.5, 1:23 or 1:02:03 (absolute), +5 or -1:30 (relative)")
        XCTAssertEqual(failure("preview 1 -3 p.png"), .outOfRange(input: "preview 1 -3 p.png", allowed: "0…604800 s"))
        XCTAssertNil(StageCommand.parse("seek nan"))
        XCTAssertEqual(failure("bogus")?.description, "unknown command 'bogus'; type help for the commands",
                       "an unknown command is one short line pointing at help")
    }
}
