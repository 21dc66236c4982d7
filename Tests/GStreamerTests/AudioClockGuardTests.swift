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
}
