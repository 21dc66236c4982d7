import GStreamer
import XCTest

/// `Element.setCustomAudioSlaving`: a real pulsesink on a foreign clock reports its skew for every buffer, and a
/// correction the callback asks for moves its playout by that amount, in that direction. Needs a PulseAudio
/// server (Scripts/test starts one); without it the test fails.
final class AudioSinkSlavingTests: XCTestCase {
    func testAnElementThatIsNotAnAudioSinkIsRefused() throws {
        let sink = try Element(factory: "fakesink", name: "not-audio")
        XCTAssertThrowsError(try sink.setCustomAudioSlaving { _ in 0 }) { error in
            XCTAssertEqual(error as? GStreamerError, .notAnAudioSink("not-audio"))
        }
    }

    func testAPulseSinkReportsSkewsAndMovesItsPlayoutByTheCorrectionAsked() async throws {
        // 3 s of a test tone at 48 kHz in 10 ms buffers, on the system clock (the sink must not provide it).
        let (pipeline, sink) = try toneIntoPulseSink(buffers: 300)
        let correctionNs: Int64 = 5_000_000
        // Every observation in order; the 100th answers with a 5 ms correction, the others with none.
        let observations = Observed<[AudioSlavingObservation]>([])
        try sink.setCustomAudioSlaving { observation in
            var count = 0
            observations.update { $0.append(observation); count = $0.count }
            return count == 100 ? correctionNs : 0
        }
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let end = recorder.expectation("eos or error") { $0.isEOS || $0.isError }
        try pipeline.setState(.playing)
        await fulfillment(of: [end], timeout: 10)
        try pipeline.setState(.null)
        XCTAssertNil(recorder.first { $0.isError }, "the pipeline failed (is PulseAudio running?)")

        let seen = observations.value
        XCTAssertEqual(seen.first, .discontinuity, "the start of playback is reported as a discontinuity")
        let skews = seen.compactMap { observation -> Int64? in
            if case .skew(let ns) = observation { return ns }
            return nil
        }
        XCTAssertGreaterThan(skews.count, 150, "one skew per rendered buffer")
        // The correction lands between the 99th and 100th skew (index 98 and 99 among the skews if only the
        // first observation was a discontinuity).
        let index = try XCTUnwrap(seen.indices.dropFirst(99).first)
        let before = seen[..<index].suffix(20).compactMap { if case .skew(let ns) = $0 { return ns } else { return nil } }
        let after = seen[(index + 1)...].prefix(20).compactMap { if case .skew(let ns) = $0 { return ns } else { return nil } }
        let shift = Double(median(after) - median(before)) / 1e6
        print(String(format: "skew before %.2f ms, after %.2f ms, shift %.2f ms", Double(median(before)) / 1e6,
                     Double(median(after)) / 1e6, shift))
        XCTAssertEqual(shift, -5, accuracy: 1.5, "asking for +5 ms must take 5 ms off the reported skew")
    }

    private func median(_ values: [Int64]) -> Int64 { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
}
