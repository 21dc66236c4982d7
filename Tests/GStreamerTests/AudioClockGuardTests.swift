import GStreamer
import XCTest

/// `Element.guardAudioClock`: the guard sits on a real pulsesink's own clock, answers the readings right after an
/// armed start by extrapolation, and leaves every other reading to the sink. Needs a PulseAudio server
/// (Scripts/test starts one); without it the test fails.
final class AudioClockGuardTests: XCTestCase {
    func testAnElementThatIsNotAnAudioSinkIsRefused() throws {
        let sink = try Element(factory: "fakesink", name: "not-audio")
        XCTAssertThrowsError(try sink.guardAudioClock()) { error in
            XCTAssertEqual(error as? GStreamerError, .notAnAudioSink("not-audio"))
        }
        XCTAssertNil(sink.audioClockGuard)
    }

    func testASinkHasOneGuardFoundAgainOnTheElement() throws {
        let sink = try Element(factory: "pulsesink", name: "guarded")
        XCTAssertNil(sink.audioClockGuard, "no guard before one is installed")
        let first = try sink.guardAudioClock()
        XCTAssertTrue(try sink.guardAudioClock() === first, "a second install returns the same guard")
        XCTAssertTrue(sink.audioClockGuard === first)
    }

    func testAnArmedStartIsAnsweredByExtrapolationThenByTheSinkAgain() async throws {
        // 2 s of a tone on the system clock, the sink following it (custom slaving reads the sink's clock on
        // every buffer, as in a coordinated view).
        let (pipeline, sink) = try toneIntoPulseSink(buffers: 200)
        let guardian = try sink.guardAudioClock(window: .milliseconds(100))
        let skews = Observed<[Int64]>([])
        try sink.setCustomAudioSlaving { observation in
            if case .skew(let ns) = observation { skews.update { $0.append(ns) } }
            return 0
        }
        let bus = pipeline.bus()   // kept: the recorder's messages stop with the bus wrapper
        let recorder = BusRecorder(bus.messages())
        let end = recorder.expectation("eos or error") { $0.isEOS || $0.isError }
        guardian.arm()
        try pipeline.setState(.playing)
        await fulfillment(of: [end], timeout: 10)
        try pipeline.setState(.null)
        XCTAssertNil(recorder.first { $0.isError }, "the pipeline failed (is PulseAudio running?)")

        let statistics = guardian.statistics
        print("guard: \(statistics.windows) window(s), \(statistics.extrapolated) extrapolated reading(s); \(skews.value.count) skews")
        XCTAssertEqual(statistics.windows, 1, "one armed start, one window")
        XCTAssertGreaterThan(statistics.extrapolated, 0, "the readings right after the start were not answered by the guard")
        XCTAssertLessThan(statistics.extrapolated, skews.value.count / 2, "the guard kept answering after its window")
        XCTAssertGreaterThan(skews.value.count, 100)
        // Unarmed, nothing is extrapolated: the same sink played again for a second without arming.
        let before = (extrapolated: guardian.statistics.extrapolated, skews: skews.value.count)
        try pipeline.setState(.playing)
        let deadline = ContinuousClock.now + .seconds(5)
        while skews.value.count < before.skews + 50 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try pipeline.setState(.null)
        XCTAssertGreaterThanOrEqual(skews.value.count, before.skews + 50, "the second play rendered (almost) nothing")
        XCTAssertEqual(guardian.statistics.extrapolated, before.extrapolated, "an unarmed start was extrapolated")
        XCTAssertEqual(guardian.statistics.windows, 1)
    }

    /// The soak's HLS views after PulseAudio came back: libpulse said 6.6 s for new streams that had never been
    /// uncorked, and the sink placed its first samples that far ahead of what the server played (its writes then
    /// blocked that long). A new sink's stream is at 0 until it first plays, so such a first start is calibrated at
    /// 0, and the tone ends when it has played. The fault is injected: readings 4 s ahead from before the start on.
    func testAFreshSinksFirstStartIsCalibratedAtZeroWhateverItsStreamTimeSays() async throws {
        let (pipeline, sink) = try toneIntoPulseSink(buffers: 200)   // 2 s
        let guardian = try sink.guardAudioClock(window: .milliseconds(100))
        try sink.setCustomAudioSlaving { _ in 0 }
        guardian.injectReadingOffset(.seconds(4))
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let end = recorder.expectation("eos or error") { $0.isEOS || $0.isError }
        guardian.arm()
        let started = ContinuousClock.now
        try pipeline.setState(.playing)
        await fulfillment(of: [end], timeout: 15)
        let took = ContinuousClock.now - started
        try pipeline.setState(.null)
        XCTAssertNil(recorder.first { $0.isError }, "the pipeline failed (is PulseAudio running?)")

        XCTAssertEqual(guardian.stoppedTimeRefusals.count, 1, "the first start's 4 s were not refused")
        let opening = guardian.lastOpening
        XCTAssertEqual(opening?.stopped, .zero, "judged against something else than a fresh stream's 0: \(String(describing: opening))")
        XCTAssertGreaterThan(opening?.reading ?? .zero, .seconds(4))
        // Placed 4 s ahead, the 2 s tone would drain after about 6 s.
        XCTAssertLessThan(took, .milliseconds(4500), "the 2 s tone took \(took) to play out: its samples were placed ahead")
    }
}
