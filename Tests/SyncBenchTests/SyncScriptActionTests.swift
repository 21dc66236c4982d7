import XCTest
@testable import SyncBench

/// The sync-report script language (`multiview sync-report --script FILE`): every action, comments, bad lines.
/// Pure: parsing only, no pipeline.
final class SyncScriptActionTests: XCTestCase {
    func testEveryActionParses() {
        let cases: [(String, SyncScriptAction)] = [
            ("play", .play), ("pause", .pause), ("resume", .resume),
            ("join", .join), ("late join", .join),
            ("seek +10", .seekBy(10)), ("seek -5", .seekBy(-5)), ("seek 2.5", .seekBy(2.5)),
            ("rate 2", .rate(2)), ("rate 0.5", .rate(0.5)),
            ("wait 3", .wait(3)), ("wait 0", .wait(0)), ("wait 1.5", .wait(1.5)),
            ("suspend 2", .suspend(view: 2)), ("stall 3", .stall(view: 3)),
            ("PLAY", .play), ("Late Join", .join), ("seek  +10", .seekBy(10)),
        ]
        for (line, expected) in cases {
            XCTAssertEqual(SyncScriptAction.parse(line), expected, line)
        }
    }

    func testBadLinesAreNoAction() {
        for line in ["", "play now", "seek", "seek x", "rate 0", "rate -1", "rate fast", "wait -1", "wait",
                     "suspend", "suspend two", "stall 1.5", "early join", "late", "jump 3"] {
            XCTAssertNil(SyncScriptAction.parse(line), "'\(line)' is no action")
        }
    }

    func testScriptSkipsCommentsAndBlankLines() throws {
        let text = """
        # a comment line
        play

           wait 2   # trailing comment
        seek -3
        #
        late join
        """
        XCTAssertEqual(try SyncScriptAction.parseScript(text), [.play, .wait(2), .seekBy(-3), .join])
        XCTAssertEqual(try SyncScriptAction.parseScript(""), [])
        XCTAssertEqual(try SyncScriptAction.parseScript("# only a comment\n\n"), [])
    }

    func testABadLineIsNamedByItsNumberAndText() {
        let text = "play\n\n  # fine\nwait 2\nrate 0  # zero is no rate\nplay\n"
        XCTAssertThrowsError(try SyncScriptAction.parseScript(text)) { error in
            let expected = SyncScriptAction.SyncScriptError.unparsableLine(number: 5, text: "rate 0")
            XCTAssertEqual(error as? SyncScriptAction.SyncScriptError, expected)
            XCTAssertEqual("\(error)", "line 5: cannot parse 'rate 0'")
        }
    }

    func testDescriptionsReadBackAsTheSameAction() throws {
        let actions: [SyncScriptAction] = SyncScriptAction.defaultScript +
            [.seekBy(0.25), .seekBy(-0.5), .rate(0.125), .wait(0), .suspend(view: 12)]
        for action in actions {
            XCTAssertEqual(SyncScriptAction.parse(action.description), action, action.description)
        }
        XCTAssertEqual(SyncScriptAction.seekBy(10).description, "seek +10")
        XCTAssertEqual(SyncScriptAction.seekBy(-5).description, "seek -5")
        XCTAssertEqual(SyncScriptAction.wait(1.5).description, "wait 1.5")
        XCTAssertEqual(SyncScriptAction.join.description, "late join")
        let script = SyncScriptAction.defaultScript.map(\.description).joined(separator: "\n")
        XCTAssertEqual(try SyncScriptAction.parseScript(script), SyncScriptAction.defaultScript)
    }

    /// The default script fits the bundled 24 s clips: media time stays inside 0…21 s at every step.
    func testDefaultScriptKeepsMediaTimeInsideTheClips() {
        var media = 0.0, rate = 1.0, playing = false
        for action in SyncScriptAction.defaultScript {
            switch action {
            case .play, .resume: playing = true
            case .pause: playing = false
            case .seekBy(let s): media += s
            case .rate(let r): rate = r
            case .wait(let s): if playing { media += s * rate }
            case .join, .suspend, .stall: break
            }
            XCTAssertGreaterThanOrEqual(media, 0, "after \(action)")
            XCTAssertLessThanOrEqual(media, 21, "after \(action)")
        }
    }

    func testWhichActionsFlushEveryView() {
        XCTAssertTrue(SyncScriptAction.seekBy(1).flushesEveryView(coordinated: false))
        XCTAssertTrue(SyncScriptAction.rate(2).flushesEveryView(coordinated: false))
        XCTAssertTrue(SyncScriptAction.play.flushesEveryView(coordinated: true))
        XCTAssertTrue(SyncScriptAction.resume.flushesEveryView(coordinated: true))
        XCTAssertFalse(SyncScriptAction.play.flushesEveryView(coordinated: false))
        XCTAssertFalse(SyncScriptAction.resume.flushesEveryView(coordinated: false))
        for action: SyncScriptAction in [.pause, .join, .suspend(view: 1), .stall(view: 1), .wait(1)] {
            XCTAssertFalse(action.flushesEveryView(coordinated: true), "\(action)")
        }
    }
}
