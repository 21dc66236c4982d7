import Foundation
import XCTest
@testable import Multiview

/// The stage's input checks, command parsing and command-task rules: pure, no pipeline, no daemon (milliseconds).
final class StageLimitsTests: XCTestCase {
    func testDurationsMustBeFinitePositiveAndAtMostSevenDays() throws {
        XCTAssertEqual(try StageLimits.duration(3, input: "--duration 3"), 3)
        XCTAssertEqual(try StageLimits.duration(604_800, input: "x"), 604_800)
        // Issue 15 row 6: these crashed (Double → Int conversion of the deadline).
        for (value, text) in [(1e18, "1e18"), (.nan, "nan"), (.infinity, "inf"), (Double("1e309")!, "1e309"), (0, "0"), (-2, "-2")] {
            XCTAssertThrowsError(try StageLimits.duration(value, input: "--duration \(text)")) { error in
                let line = "\(error)"
                XCTAssertTrue(line.hasPrefix("--duration \(text): "), line)
                XCTAssertTrue(line.contains("at most 604800 s"), line)
            }
        }
        XCTAssertEqual("\(StageInputError.notFinite(input: "--duration nan", allowed: "a…b"))",
                       "--duration nan: not a finite number; allowed: a…b")
    }

    func testRatesAreAnEighthToEight() throws {
        XCTAssertEqual(try StageLimits.rate(0.125, input: "rate 0.125"), 0.125)
        XCTAssertEqual(try StageLimits.rate(8, input: "rate 8"), 8)
        XCTAssertThrowsError(try StageLimits.rate(100, input: "rate 100")) { error in
            XCTAssertEqual("\(error)", "rate 100: out of range; allowed: 0.125…8 (1/8× to 8×; faster: ff N on HLS views)")
        }
        XCTAssertThrowsError(try StageLimits.rate(0.1, input: "rate 0.1"))
        XCTAssertThrowsError(try StageLimits.rate(.nan, input: "rate nan"))
    }

    func testSeekTargetsAgainstTheEndOfTheMedia() throws {
        XCTAssertEqual(try StageLimits.seekTarget(23.9, end: 24, input: "seek 23.9"), 23.9)
        XCTAssertEqual(try StageLimits.seekTarget(1e5, end: nil, input: "seek 100000"), 1e5, "unknown end (live): no limit")
        XCTAssertThrowsError(try StageLimits.seekTarget(42.5, end: 24, input: "seek 42.5")) { error in
            XCTAssertEqual(error as? StageInputError, .pastTheEnd(input: "seek 42.5", end: 24))
            XCTAssertEqual("\(error)", "seek 42.5: past the end of the media; allowed: 0…24.0 s (nothing moved)")
        }
        XCTAssertThrowsError(try StageLimits.relativeSeek(1e300, input: "+1e300"))
        XCTAssertThrowsError(try StageLimits.mediaTime(-1, input: "preview 1 -1 p.png"))
    }

    func testViewNumbersAndTiles() throws {
        XCTAssertEqual(try StageLimits.view(2, count: 2, input: "r 2"), 2)
        XCTAssertThrowsError(try StageLimits.view(3, count: 2, input: "r 3")) { error in
            XCTAssertEqual("\(error)", "r 3: no view 3; views are 1…2")
        }
        XCTAssertThrowsError(try StageLimits.view(0, count: 2, input: "ff 0"))
        XCTAssertTrue(try StageLimits.tile("480x270") == (480, 270))
        XCTAssertThrowsError(try StageLimits.tile("5x5"))
        XCTAssertThrowsError(try StageLimits.tile("99999999999999999999x270"))
        XCTAssertThrowsError(try StageLimits.tile("480by270"))
        XCTAssertThrowsError(try StageLimits.spareTileCount(-1, input: "--spare-tiles -1"))
    }

    func testReadingCommandsSaysWhyALineWasRefused() {
        XCTAssertEqual(try StageCommand.read("seek 42.5").get(), .seekTo(42.5))
        XCTAssertEqual(try StageCommand.read("+10").get(), .seekBy(10))
        XCTAssertEqual(try StageCommand.read("r 7").get(), .whatHappened(7), "view numbers are checked by the stage")
        XCTAssertEqual(StageCommand.read("rate 100").failure, .outOfRange(input: "rate 100", allowed: StageLimits.ratesText))
        XCTAssertEqual(StageCommand.read("rate inf").failure, .notFinite(input: "rate inf", allowed: StageLimits.ratesText))
        XCTAssertEqual(StageCommand.read("seek nan").failure?.description.hasPrefix("seek nan: not a finite number"), true)
        XCTAssertEqual(StageCommand.read("dance").failure, .unknownCommand("dance"))
        XCTAssertNil(StageCommand.parse("rate 100"))
        for command: StageCommand in [.seekTo(42.5), .seekBy(-5), .rate(2), .whatHappened(3), .subtitles(view: 2, language: nil),
                                      .trickPlay(view: 1, rate: -8), .preferAudio(nil), .togglePause] {
            XCTAssertEqual(StageCommand.parse(command.typed), command, "typed form reads back: \(command.typed)")
        }
    }

    func testWhichNewerCommandSupersedesAnOlderOne() {
        XCTAssertTrue(CommandSupersession.supersedes(.seekTo(5), .seekTo(20)))
        XCTAssertTrue(CommandSupersession.supersedes(.seekTo(5), .seekBy(10)))
        XCTAssertFalse(CommandSupersession.supersedes(.seekBy(10), .seekBy(10)), "two +10 make +20")
        XCTAssertTrue(CommandSupersession.supersedes(.rate(2), .rate(4)))
        XCTAssertTrue(CommandSupersession.supersedes(.pause, .play))
        XCTAssertFalse(CommandSupersession.supersedes(.pause, .seekTo(3)), "a pause after a seek waits for the seek")
        XCTAssertFalse(CommandSupersession.supersedes(.whatHappened(1), .whatHappened(1)))
    }

    /// A superseding command cancels the older and does not wait for it; a non-superseding one waits, in order.
    func testCommandTasksKeepOrderOrCancelTheOlder() async {
        let log = Log()
        var tasks = StageCommandTasks()
        let gate = Gate()
        let first = tasks.start(.seekBy(1), on: .viewTransport(1)) {
            await gate.wait()
            log.append("seekBy done")
            return .done
        }
        let second = tasks.start(.seekBy(2), on: .viewTransport(1)) {
            log.append("second seekBy ran")
            return .done
        }
        try? await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(log.lines, [], "the second relative seek waits for the first")
        let third = tasks.start(.seekTo(9), on: .viewTransport(1)) {
            log.append("seekTo ran")
            return .done
        }
        let thirdResult = await third.task.value
        XCTAssertEqual(thirdResult, .done, "the absolute seek did not wait for the stuck one")
        let secondResult = await second.task.value
        XCTAssertEqual(secondResult, .superseded)
        XCTAssertEqual(log.lines, ["seekTo ran"])
        await gate.open()
        let firstResult = await first.task.value
        XCTAssertEqual(firstResult, .done, "the older one ends on its own, once released")
        // Another target is never held by this one.
        let other = tasks.start(.rate(2), on: .viewTransport(2)) { .done }
        let otherResult = await other.task.value
        XCTAssertEqual(otherResult, .done)
        tasks.cancelAll()
    }

    /// The teardown's deadline fires even when a view never reports stopped, and names it.
    func testStopTrackerReturnsTheStuckViewsAtTheDeadline() async {
        let tracker = StopTracker(views: [1, 2, 3])
        tracker.stopped(1)
        tracker.stopped(3)
        let start = ContinuousClock.now
        let stuck = await tracker.wait(deadline: .milliseconds(200))
        XCTAssertEqual(stuck, [2])
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(190))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(2))
        let all = StopTracker(views: [1])
        Task { tracker.stopped(2); all.stopped(1) }
        let none = await all.wait(deadline: .seconds(10))
        XCTAssertEqual(none, [], "returns as soon as every view stopped")
    }
}

private extension Result {
    var failure: Failure? { if case .failure(let error) = self { return error } else { return nil } }
}

/// Lines appended from tasks; the lock owns them.
private final class Log: @unchecked Sendable {
    // Sendable: `_lines` only under `lock`.
    private let lock = NSLock()
    private var _lines: [String] = []
    func append(_ line: String) { lock.withLock { _lines.append(line) } }
    var lines: [String] { lock.withLock { _lines } }
}

/// Holds a task until opened.
private actor Gate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var isOpen = false
    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
    func open() {
        isOpen = true
        waiters.forEach { $0.resume() }
        waiters = []
    }
}
