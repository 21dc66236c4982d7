import ArgumentParser
import Multiview
import XCTest
@testable import MultiviewCLI

/// `--duration` and `--no-audio`, one option group (`PlayOptions`) in `play`, `host` and `join`: the same names,
/// the same help, the same checks. Pure: parsing and help text only (`run` is never called).
final class PlayOptionsTests: XCTestCase {
    private func options(_ command: String, _ arguments: [String]) throws -> PlayOptions {
        switch command {
        case "play": return try Play.parse(arguments + ["a.mp4"]).playOptions
        case "host": return try Host.parse(arguments + ["a.mp4"]).playOptions
        default: return try Join.parse(["127.0.0.1:7654"] + arguments).playOptions
        }
    }

    func testEveryCommandReadsAndChecksTheSharedOptionsAlike() throws {
        for command in ["play", "host", "join"] {
            let given = try options(command, ["--duration", "2.5", "--no-audio"])
            XCTAssertEqual(try given.checkedDuration(), 2.5, command)
            XCTAssertTrue(given.noAudio, command)
            XCTAssertEqual(given.audio, .fakeSink, command)
            let none = try options(command, [])
            XCTAssertNil(try none.checkedDuration(), command)
            XCTAssertNil(none.audio, "\(command): the stage chooses (PulseAudio when it answers)")
            for (typed, line) in [("0", "--duration 0: out of range; allowed: more than 0 and at most 604800 s"),
                                  ("five", "--duration five: expected seconds, e.g. 5 or 2.5"),
                                  ("1e309", "--duration 1e309: not a finite number; allowed: more than 0 and at most 604800 s")] {
                XCTAssertThrowsError(try options(command, ["--duration", typed]).checkedDuration(), "\(command) \(typed)") { error in
                    XCTAssertEqual("\(error)", line, "\(command): quoted as typed")
                }
            }
        }
    }

    func testTheFlagsKeepTheirNamesAndHelp() {
        for help in [Play.helpMessage(columns: 300), Host.helpMessage(columns: 300), Join.helpMessage(columns: 300)] {
            XCTAssertTrue(help.contains("--duration <duration>"), help)
            XCTAssertTrue(help.contains("Stop after this many seconds (more than 0, at most 604800)."), help)
            XCTAssertTrue(help.contains("--no-audio"), help)
            XCTAssertTrue(help.contains("Send audio to fake sinks even when PulseAudio is reachable."), help)
        }
        XCTAssertTrue(Play.helpMessage(columns: 300).contains(
            "No window: video to fake sinks, audio to PulseAudio if reachable (automatic without a display)."))
        for help in [Host.helpMessage(columns: 300), Join.helpMessage(columns: 300)] {
            XCTAssertTrue(help.contains("--headless"), help)
            XCTAssertTrue(help.contains("No window: video to fake sinks.\n"), help)
        }
    }
}
