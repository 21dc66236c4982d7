import GStreamer
import XCTest

/// `AudioClockReadingPolicy`: the guard's decisions with injected readings and instants (ns). Pure: no pipeline,
/// no daemon.
final class AudioClockReadingPolicyTests: XCTestCase {
    private let ms: UInt64 = 1_000_000
    private let s: UInt64 = 1_000_000_000

    /// Asks the sink (when the policy lets it) and returns what the clock would be answered; nil for "none".
    private func read(_ policy: inout AudioClockReadingPolicy, sink: UInt64?, at now: UInt64) -> UInt64?? {
        switch policy.beforeAsking(now: now) {
        case .answer(let time): return .some(time)
        case .lost: return .none
        case .askSink: return .some(policy.afterAsking(reading: sink, now: now))
        }
    }

    func testReadingsRunningWithRealTimeAreAnsweredAsTheSinkGivesThem() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        for i in UInt64(0)..<50 {
            XCTAssertEqual(read(&policy, sink: 2 * s + i * 10 * ms, at: 100 * s + i * 10 * ms), .some(2 * s + i * 10 * ms))
        }
        // A stall and the server's catch-up afterwards stay within real time: accepted.
        XCTAssertEqual(read(&policy, sink: 2 * s + 490 * ms, at: 102 * s), .some(2 * s + 490 * ms))
        XCTAssertEqual(read(&policy, sink: 4 * s, at: 102 * s + 10 * ms), .some(4 * s))
        XCTAssertEqual(policy.refused, 0)
        XCTAssertEqual(policy.extrapolated, 0, "unarmed: nothing extrapolated")
    }

    func testAStreamTimeThatJumpsYearsAheadIsRefusedAndTheLastGoodOneExtrapolated() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        XCTAssertEqual(read(&policy, sink: 15 * s, at: 50 * s), .some(15 * s))
        let eightAndAHalfYears: UInt64 = 268_000_000 * s
        // What the sink would have reached by then, not the wrap.
        XCTAssertEqual(read(&policy, sink: eightAndAHalfYears, at: 50 * s + 20 * ms), .some(15 * s + 20 * ms))
        // The wrap sticks in libpulse: every later reading is absurd too, and still extrapolated.
        XCTAssertEqual(read(&policy, sink: eightAndAHalfYears + 1 * s, at: 51 * s), .some(16 * s))
        XCTAssertEqual(policy.refused, 2)
        // A sane reading again (a new stream) is taken as it comes.
        XCTAssertEqual(read(&policy, sink: 10 * ms, at: 52 * s), .some(10 * ms))
        XCTAssertEqual(policy.refused, 2)
    }

    func testAFirstReadingYearsAheadIsRefusedWithNone() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        XCTAssertEqual(read(&policy, sink: 500 * 365 * 86_400 * s, at: 5 * s), .some(nil))
        XCTAssertEqual(policy.refused, 1)
        XCTAssertEqual(read(&policy, sink: 20 * ms, at: 5 * s + 20 * ms), .some(20 * ms))
    }

    func testAJumpWithinTheToleranceIsAccepted() {
        var policy = AudioClockReadingPolicy(window: 100 * ms, jumpTolerance: 1 * s)
        XCTAssertEqual(read(&policy, sink: 1 * s, at: 10 * s), .some(1 * s))
        XCTAssertEqual(read(&policy, sink: 1 * s + 900 * ms, at: 10 * s), .some(1 * s + 900 * ms), "0.9 s ahead: within 1 s")
        XCTAssertEqual(read(&policy, sink: 3 * s + 1 * ms, at: 10 * s + 100 * ms), .some(2 * s),
                       "1.001 s ahead of 1.9 s + 0.1 s: refused")
    }

    func testAnArmedStartIsAnsweredByExtrapolationForTheWindowThenByTheSink() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 10 * s)
        // Before the armed instant: asked, no window.
        XCTAssertEqual(read(&policy, sink: 3 * s, at: 9 * s), .some(3 * s))
        XCTAssertEqual(policy.windows, 0)
        // The first reading at or after it is the calibration: asked, and it opens the window.
        XCTAssertEqual(read(&policy, sink: 3 * s, at: 10 * s + 1 * ms), .some(3 * s))
        XCTAssertEqual(policy.windows, 1)
        XCTAssertNil(policy.armedAfter)
        // Inside the window the sink's garbage is never seen: extrapolated from the calibration.
        XCTAssertEqual(policy.beforeAsking(now: 10 * s + 51 * ms), .answer(3 * s + 50 * ms))
        XCTAssertEqual(policy.extrapolated, 1)
        // After it, the sink again.
        XCTAssertEqual(policy.beforeAsking(now: 10 * s + 101 * ms), .askSink)
        XCTAssertEqual(policy.afterAsking(reading: 3 * s + 95 * ms, now: 10 * s + 101 * ms), 3 * s + 95 * ms)
    }

    func testNoneFromTheSinkStaysNoneAndDoesNotOpenTheWindow() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 1 * s)
        XCTAssertEqual(read(&policy, sink: nil, at: 2 * s), .some(nil))
        XCTAssertEqual(policy.windows, 0)
        XCTAssertEqual(policy.armedAfter, 1 * s)
    }

    func testALostSinkIsNeverAskedAgain() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 1 * s)
        XCTAssertEqual(read(&policy, sink: 1 * s, at: 1 * s), .some(1 * s))
        policy.markLost()
        XCTAssertTrue(policy.isLost)
        // Even inside the start window: the answer is "none" and the guard keeps the sink from starting.
        XCTAssertEqual(policy.beforeAsking(now: 1 * s + 10 * ms), .lost)
        policy.arm(at: 3 * s)
        XCTAssertEqual(policy.beforeAsking(now: 4 * s), .lost)
    }

    // MARK: Rule 4: time that ran while the sink was stopped

    /// Plays 0.2 s (a fresh stream's priming: renders every 20 ms, each reading accepted), then stops at 5.2 s
    /// with the stream's time at 0.2 s.
    private func primed(_ policy: inout AudioClockReadingPolicy) {
        policy.arm(at: 5 * s)
        for i in UInt64(0)...10 {
            XCTAssertEqual(read(&policy, sink: i * 20 * ms, at: 5 * s + i * 20 * ms), .some(i * 20 * ms))
        }
        policy.stopped(reading: 200 * ms, now: 5200 * ms)
        XCTAssertEqual(policy.stoppedReading, 200 * ms)
    }

    func testAStartWhoseStreamTimeRanWhileStoppedOpensItsWindowWhereTheStreamStopped() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        // Stopped at 0.2 s; started at 8.6 s, where libpulse says 3.465 s (the soak's added view).
        policy.arm(at: 8600 * ms)
        XCTAssertEqual(read(&policy, sink: 3465 * ms, at: 8600 * ms), .some(200 * ms), "calibrated where it stopped")
        XCTAssertEqual(policy.stoppedTimeRefused, 1)
        XCTAssertEqual(policy.lastStoppedExcess, 3265 * ms)
        XCTAssertEqual(policy.beforeAsking(now: 8650 * ms), .answer(250 * ms), "the window extrapolates from there")
        // After the window libpulse holds its time until the real position catches up: answered with real time.
        XCTAssertEqual(read(&policy, sink: 3465 * ms, at: 8800 * ms), .some(400 * ms))
        XCTAssertEqual(read(&policy, sink: 3466 * ms, at: 10 * s), .some(1600 * ms))
        // The real position passes libpulse's held time: the sink's readings are taken again.
        XCTAssertEqual(read(&policy, sink: 3480 * ms, at: 11880 * ms), .some(3480 * ms))
        XCTAssertEqual(read(&policy, sink: 3500 * ms, at: 11900 * ms), .some(3500 * ms))
        XCTAssertEqual(policy.refused, 0, "not counted as absurd jumps")
    }

    func testAStartWhoseStreamStoppedWhereItWasReadIsCalibratedOnTheSink() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        // The stream ran on for a buffer or two after the last render, until its cork landed: within tolerance.
        policy.arm(at: 8600 * ms)
        XCTAssertEqual(read(&policy, sink: 240 * ms, at: 8600 * ms), .some(240 * ms))
        XCTAssertEqual(policy.stoppedTimeRefused, 0)
        XCTAssertNil(policy.stoppedReading, "used by the start it preceded")
        // A start with no stop noted before it (a playing sink armed again, a flush) is not judged by rule 4.
        XCTAssertEqual(read(&policy, sink: 400 * ms, at: 8760 * ms), .some(400 * ms))
        policy.arm(at: 8770 * ms)
        XCTAssertEqual(read(&policy, sink: 900 * ms, at: 8780 * ms), .some(900 * ms))
        XCTAssertEqual(policy.stoppedTimeRefused, 0)
    }

    func testAStopReadingRule3WouldRefuseIsNotNoted() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        policy.arm(at: 6 * s)
        XCTAssertEqual(read(&policy, sink: 200 * ms, at: 6 * s), .some(200 * ms))
        policy.stopped(reading: 268_000_000 * s, now: 6100 * ms)
        XCTAssertNil(policy.stoppedReading, "a wrapped time is no stop position")
    }

    func testAFreshStreamsFirstStartIsJudgedAgainstZero() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        XCTAssertEqual(policy.stoppedReading, 0, "a new sink's stream has never played")
        policy.arm(at: 1 * s)
        XCTAssertEqual(read(&policy, sink: 700 * ms, at: 1 * s), .some(700 * ms), "within the tolerance: taken")
        XCTAssertEqual(policy.stoppedTimeRefused, 0)

        // The soak's HLS views after PulseAudio came back: libpulse said 6.6 s for streams never uncorked.
        var fresh = AudioClockReadingPolicy(window: 100 * ms)
        fresh.arm(at: 205 * s)
        XCTAssertEqual(read(&fresh, sink: 6600 * ms, at: 205 * s), .some(0))
        XCTAssertEqual(fresh.stoppedTimeRefused, 1)
        XCTAssertEqual(fresh.lastStoppedExcess, 6600 * ms)
    }

    func testAStopWhileAbsorbingIsNotedWhereTheAnswersRanTo() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        policy.arm(at: 8600 * ms)
        XCTAssertEqual(read(&policy, sink: 3465 * ms, at: 8600 * ms), .some(200 * ms))
        XCTAssertEqual(read(&policy, sink: 3465 * ms, at: 9 * s), .some(600 * ms), "libpulse held: extrapolated")
        // Stopped 0.1 s after the last render, libpulse still ahead: the stream is where the answers ran to.
        policy.stopped(reading: 3465 * ms, now: 9100 * ms)
        XCTAssertEqual(policy.stoppedReading, 700 * ms)
        // The next start, libpulse having run on while corked, is placed there again.
        policy.arm(at: 11 * s)
        XCTAssertEqual(read(&policy, sink: 6 * s, at: 11 * s), .some(700 * ms))
        XCTAssertEqual(policy.stoppedTimeRefused, 2)
    }

    func testAnExcessLibpulseKeepsWhileRunningWithRealTimeIsTakenOffItsReadingsPastTheLimit() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        policy.arm(at: 8600 * ms)
        XCTAssertEqual(read(&policy, sink: 3465 * ms, at: 8600 * ms), .some(200 * ms), "3.265 s refused")
        // libpulse runs on with real time, 3.265 s ahead: its readings less that, so the follower sees its drift.
        XCTAssertEqual(read(&policy, sink: 3865 * ms, at: 9 * s), .some(600 * ms))
        XCTAssertEqual(read(&policy, sink: 4875 * ms, at: 10 * s), .some(1610 * ms), "10 ms of drift passed on")
        // Long past the limit (3.265 s + 0.25 s after the start) the excess is still taken off.
        XCTAssertEqual(read(&policy, sink: 14875 * ms, at: 20 * s), .some(11610 * ms))
        XCTAssertEqual(policy.refused, 0)
        // libpulse comes back to the stream's time: taken as it is, and the excess is forgotten.
        XCTAssertEqual(read(&policy, sink: 11620 * ms, at: 20010 * ms), .some(11620 * ms))
        XCTAssertEqual(read(&policy, sink: 13 * s, at: 20020 * ms), .some(13 * s), "rule 3's 10 s again")
    }

    func testAKeptExcessStaysTakenOffThroughTheServersLagsAndCatchUps() {
        // StreamTimeRanWhileCorkedTests under a full suite's load: libpulse 4 s ahead and running with real time,
        // then the server lagged 0.3 s and caught up; past the limit the whole 4 s came back as a stall before.
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        policy.arm(at: 10 * s)
        XCTAssertEqual(read(&policy, sink: 4 * s, at: 10 * s), .some(0), "a fresh stream: 4 s refused")
        XCTAssertEqual(read(&policy, sink: 4200 * ms, at: 10200 * ms), .some(200 * ms), "on with real time: kept")
        XCTAssertEqual(read(&policy, sink: 4700 * ms, at: 11 * s), .some(700 * ms), "0.3 s behind: the lag is seen")
        XCTAssertEqual(read(&policy, sink: 6 * s, at: 12 * s), .some(2 * s), "caught up: still less the excess")
        XCTAssertEqual(read(&policy, sink: 14 * s, at: 20 * s), .some(10 * s), "long past the limit")
        XCTAssertEqual(policy.refused, 0)

        // The server began the stream late (the same test under load: libpulse held 0.33 s after the start, then
        // ran with real time 3.65 s ahead): extrapolated while held, then less the refused 4 s as soon as it runs
        // with real time, the 0.2 s it is behind included (taken whole at the limit before).
        var late = AudioClockReadingPolicy(window: 100 * ms)
        late.arm(at: 10 * s)
        XCTAssertEqual(read(&late, sink: 4 * s, at: 10 * s), .some(0))
        XCTAssertEqual(read(&late, sink: 4 * s, at: 10200 * ms), .some(200 * ms), "held: extrapolated")
        XCTAssertEqual(read(&late, sink: 4 * s, at: 10300 * ms), .some(300 * ms), "held: extrapolated")
        XCTAssertEqual(read(&late, sink: 4100 * ms, at: 10400 * ms), .some(100 * ms), "running: less the excess")
        XCTAssertEqual(read(&late, sink: 8100 * ms, at: 14400 * ms), .some(4100 * ms))
        XCTAssertEqual(read(&late, sink: 14 * s, at: 20300 * ms), .some(10 * s), "long past the limit")
    }

    func testAHeldTimeReadEveryFewMillisecondsIsNotTakenForOneRunningOn() {
        // AddedViewAudioTests: primed to 0.21 s, started with libpulse saying 2.963 s and holding it, read by the
        // sink every millisecond or so: two equal readings 2 ms apart looked like real time, the excess was taken
        // off a held time, the clock stood still at 0.21 s and the view never got ready.
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        policy.arm(at: 8 * s)
        XCTAssertEqual(read(&policy, sink: 2963 * ms, at: 8 * s), .some(200 * ms))
        XCTAssertEqual(read(&policy, sink: 2963 * ms, at: 8300 * ms), .some(500 * ms))
        XCTAssertEqual(read(&policy, sink: 2963 * ms, at: 8302 * ms), .some(502 * ms), "held: still extrapolated")
        XCTAssertEqual(read(&policy, sink: 2963 * ms, at: 8500 * ms), .some(700 * ms))
    }

    func testAStreamStopsMovingAtItsFirstStopUntilItStartsAgain() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        // A second stop without a start between them (a pause, then a buffering hold): still 0.2 s.
        policy.stopped(reading: 1500 * ms, now: 7 * s)
        XCTAssertEqual(policy.stoppedReading, 200 * ms)
        // Never started at all: a fresh stream stays at 0 through its stops.
        var fresh = AudioClockReadingPolicy(window: 100 * ms)
        fresh.stopped(reading: 1100 * ms, now: 200 * s)
        XCTAssertEqual(fresh.stoppedReading, 0)
    }

    func testTheAbsorptionEndsAtItsLimitWhenTheSinkNeverComesBack() {
        var policy = AudioClockReadingPolicy(window: 100 * ms, absorbLimit: 1 * s)
        primed(&policy)
        policy.arm(at: 6 * s)
        XCTAssertEqual(read(&policy, sink: 1700 * ms, at: 6 * s), .some(200 * ms), "1.5 s refused")
        XCTAssertEqual(read(&policy, sink: 3 * s, at: 7 * s), .some(1200 * ms), "still ahead: extrapolated")
        XCTAssertEqual(read(&policy, sink: 5 * s, at: 8 * s), .some(2200 * ms), "still ahead: extrapolated")
        // 1.5 s of excess + 1 s of limit after the start: the sink's readings are taken again, whatever they say.
        XCTAssertEqual(read(&policy, sink: 5 * s, at: 8500 * ms), .some(5 * s))
        XCTAssertEqual(read(&policy, sink: 5 * s + 20 * ms, at: 8520 * ms), .some(5 * s + 20 * ms))
    }

    func testReadingsBehindTheExtrapolationWhileAbsorbingAreTaken() {
        var policy = AudioClockReadingPolicy(window: 100 * ms)
        primed(&policy)
        policy.arm(at: 8 * s)
        XCTAssertEqual(read(&policy, sink: 2 * s, at: 8 * s), .some(200 * ms))
        // libpulse went below real time (it re-based on the server's position): taken, the follower sees it.
        XCTAssertEqual(read(&policy, sink: 250 * ms, at: 8300 * ms), .some(250 * ms))
        XCTAssertEqual(read(&policy, sink: 2 * s, at: 8320 * ms), .some(270 * ms), "still absorbing: ahead again, refused")
        XCTAssertEqual(read(&policy, sink: 300 * ms, at: 8340 * ms), .some(300 * ms), "back within tolerance: taken")
        XCTAssertEqual(read(&policy, sink: 1 * s, at: 8360 * ms), .some(1 * s), "absorbing over: rule 3's 10 s again")
    }
}
