import CGStreamer
import Glibc
import GStreamer
import XCTest

/// `Clock`, `Pipeline.useClock`, `Element.startTime` / `baseTime`: the basis of coordinated playback.
final class ClockTests: XCTestCase {
    private func monotonicNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// A second GstSystemClock instance, distinct from the process-wide singleton, obtained through public API
    /// only (an element's `clock`).
    private func makeDistinctClock() throws -> Clock {
        XCTAssertTrue(GStreamer.ensureInitialized())
        let scratch = try Element(factory: "fakesink")
        let raw = try XCTUnwrap(g_object_new_with_properties(gst_system_clock_get_type(), 0, nil, nil))
        g_object_ref_sink(raw)
        XCTAssertNotEqual(gst_element_set_clock(scratch.element, UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstClock.self)), 0)
        g_object_unref(raw)
        return try XCTUnwrap(scratch.clock)
    }

    func testSystemClockIsTheMonotonicSingletonAndAdvances() async throws {
        let clock = Clock.systemClock()
        XCTAssertTrue(clock.isSystemClock)
        XCTAssertTrue(clock === Clock.systemClock(), "one process-wide system clock")
        XCTAssertEqual(clock.typeName, "GstSystemClock")

        let before = monotonicNow()
        let t0 = clock.time
        let after = monotonicNow()
        XCTAssertGreaterThanOrEqual(t0.nanoseconds, before, "GStreamer's system clock is CLOCK_MONOTONIC")
        XCTAssertLessThanOrEqual(t0.nanoseconds, after)

        try await Task.sleep(for: .milliseconds(20))
        let t1 = clock.time
        XCTAssertGreaterThan(t1, t0)
        XCTAssertGreaterThanOrEqual((t1 - t0).milliseconds, 20)

        let other = try makeDistinctClock()
        XCTAssertTrue(other.isSystemClock)
        XCTAssertFalse(other === clock)
    }

    func testUseClockIsReportedAsPipelineClockWhenPlaying() async throws {
        for makeClock in [{ Clock.systemClock() }, { try self.makeDistinctClock() }] {
            let forced = try makeClock()
            let pipeline = try Pipeline.parseLaunch("""
                videotestsrc is-live=true ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink name=sink sync=true processing-deadline=0
                """)
            let sink = try XCTUnwrap(pipeline.child(named: "sink"))
            pipeline.useClock(forced)
            let bus = pipeline.bus()
            let recorder = BusRecorder(bus.messages())
            let playing = recorder.expectation("PLAYING") { $0.isPipelineState(.playing) }
            try pipeline.setState(.playing)
            await fulfillment(of: [playing], timeout: defaultTimeout)

            let pipelineClock = try XCTUnwrap(pipeline.pipelineClock)
            XCTAssertTrue(pipelineClock === forced)
            XCTAssertTrue(try XCTUnwrap(pipeline.clock) === forced, "the pipeline distributes it")
            XCTAssertTrue(try XCTUnwrap(sink.clock) === forced, "to every child")
            XCTAssertTrue(recorder.messages.value.contains {
                if case .newClock(let source) = $0 { return source.isPipeline } else { return false }
            })

            // A live source (into a syncing sink) reports its latency: one frame.
            let latency = try XCTUnwrap(pipeline.queryLatency())
            XCTAssertTrue(latency.live)
            XCTAssertEqual(latency.minimum.seconds, 1.0 / 30, accuracy: 1e-6)
            try pipeline.setState(.null)
        }
    }

    func testAutoClockGoesBackToTheElectedClock() throws {
        let distinct = try makeDistinctClock()
        let pipeline = try Pipeline.parseLaunch("fakesrc ! fakesink")
        pipeline.useClock(distinct)
        XCTAssertTrue(try XCTUnwrap(pipeline.pipelineClock) === distinct)
        pipeline.autoClock()
        // With no clock provider inside, the pipeline falls back to the system clock.
        XCTAssertTrue(try XCTUnwrap(pipeline.pipelineClock) === Clock.systemClock())
    }

    func testNoStartTimeKeepsTheCallersBaseTimeAcrossPausedToPlaying() async throws {
        let system = Clock.systemClock()
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc ! video/x-raw,width=32,height=24,framerate=30/1 \
            ! fakesink name=sink sync=true signal-handoffs=true
            """)
        let sink = try XCTUnwrap(pipeline.child(named: "sink"))
        pipeline.useClock(system)
        pipeline.startTime = nil
        XCTAssertNil(pipeline.startTime)
        let base = system.time + .milliseconds(300)
        pipeline.baseTime = base
        XCTAssertEqual(pipeline.baseTime, base)

        // When does the first buffer get rendered, on the shared clock?
        let firstRender = Observed<ClockTime?>(nil)
        let connection = try sink.connect("handoff") { _ in
            let now = system.time
            firstRender.update { if $0 == nil { $0 = now } }
        }
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let playing = recorder.expectation("PLAYING") { $0.isPipelineState(.playing) }
        let rendered = firstRender.expectation("first render") { $0 != nil }
        try pipeline.setState(.playing)
        await fulfillment(of: [playing, rendered], timeout: defaultTimeout)

        XCTAssertEqual(pipeline.baseTime, base, "PAUSED→PLAYING kept the caller's base time")
        XCTAssertEqual(sink.baseTime, base, "and handed it to the children")
        XCTAssertNil(pipeline.startTime)
        let first = try XCTUnwrap(firstRender.value)
        XCTAssertGreaterThanOrEqual(first, base, "running time 0 is rendered at base time, not before")
        XCTAssertLessThan((first - base).milliseconds, 100, "and promptly")

        // Pause and resume: still the same base time.
        let paused = recorder.expectation("PAUSED") { $0.isPipelineState(.paused) }
        try pipeline.setState(.paused)
        await fulfillment(of: [paused], timeout: defaultTimeout)
        let resumedCount = recorder.messages.value.filter { $0.isPipelineState(.playing) }.count
        let resumed = recorder.messages.expectation("PLAYING again") {
            $0.filter { $0.isPipelineState(.playing) }.count > resumedCount
        }
        try pipeline.setState(.playing)
        await fulfillment(of: [resumed], timeout: defaultTimeout)
        XCTAssertEqual(pipeline.baseTime, base)
        XCTAssertEqual(sink.baseTime, base)
        try pipeline.setState(.null)
        withExtendedLifetime(connection) {}
    }

    /// The control for the test above: with the default start time, the pipeline picks its own base time.
    func testDefaultStartTimeOverwritesTheBaseTime() throws {
        let system = Clock.systemClock()
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink sync=true
            """)
        pipeline.useClock(system)
        XCTAssertEqual(pipeline.startTime, .zero)
        let base = system.time + .seconds(3600)
        pipeline.baseTime = base
        try pipeline.setState(.playing)
        XCTAssertEqual(try pipeline.waitForState(timeout: .seconds(defaultTimeout)), .playing)
        let chosen = try XCTUnwrap(pipeline.baseTime)
        XCTAssertNotEqual(chosen, base)
        XCTAssertLessThanOrEqual(chosen, system.time)
        try pipeline.setState(.null)
    }

    func testPipelineLatencyProperty() throws {
        let pipeline = try Pipeline()
        XCTAssertNil(pipeline.latency, "GST_CLOCK_TIME_NONE by default")
        pipeline.latency = .milliseconds(250)
        XCTAssertEqual(pipeline.latency, .milliseconds(250))
        pipeline.latency = nil
        XCTAssertNil(pipeline.latency)
    }
}
