import GStreamer
import XCTest

/// Signals (`connect` → `SignalConnection`) and pad probes (`addProbe` → `PadProbe`) on running pipelines.
final class SignalAndProbeTests: XCTestCase {
    /// An endless small video stream into a fakesink that emits "handoff"; runs as fast as the CPU allows.
    private func makeEndlessPipeline() throws -> (Pipeline, Element) {
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc ! video/x-raw,width=32,height=24,framerate=30/1 \
            ! fakesink name=sink signal-handoffs=true sync=false
            """)
        return (pipeline, try XCTUnwrap(pipeline.child(named: "sink")))
    }

    func testHandoffSignalCountsBuffersAndStopsAfterTokenIsReleased() async throws {
        let (pipeline, sink) = try makeEndlessPipeline()
        let handoffs = Observed(0)
        let firstArguments = Observed<[String]>([])
        // Only the closure owns the sentinel, so its weak box tells when GLib released the closure.
        let weakSentinel: WeakBox<Sentinel>
        var connection: SignalConnection?
        do {
            let sentinel = Sentinel()
            weakSentinel = WeakBox(object: sentinel)
            connection = try sink.connect("handoff") { [sentinel] arguments in
                _ = sentinel
                handoffs.update { $0 += 1 }
                if firstArguments.value.isEmpty {
                    // handoff(GstElement* sink, GstBuffer* buffer, GstPad* pad)
                    let described = ["\(arguments.count)", arguments.element(at: 0)?.name ?? "nil",
                                     arguments.pad(at: 2)?.name ?? "nil",
                                     arguments.element(at: 2) == nil ? "pad is not an element" : "wrong",
                                     arguments.int(at: 7) == nil ? "out of range is nil" : "wrong"]
                    firstArguments.update { if $0.isEmpty { $0 = described } }
                }
            }
        }
        XCTAssertTrue(connection?.isConnected ?? false)

        // An independent progress meter that stays installed throughout.
        let buffers = Observed(0)
        let meter = try sink.staticPad("sink").addProbe(.buffer) { _ in
            buffers.update { $0 += 1 }
            return .ok
        }
        let tenHandoffs = handoffs.expectation("10 handoffs") { $0 >= 10 }
        try pipeline.setState(.playing)
        await fulfillment(of: [tenHandoffs], timeout: defaultTimeout)
        XCTAssertEqual(firstArguments.value,
                       ["3", "sink", "sink", "pad is not an element", "out of range is nil"])

        XCTAssertNotNil(weakSentinel.object, "the connected closure is alive")
        connection = nil
        let atRelease = handoffs.value
        let released = buffers.value
        await fulfillment(of: [buffers.expectation("50 more buffers") { $0 >= released + 50 }],
                          timeout: defaultTimeout)
        let settled = handoffs.value
        XCTAssertLessThanOrEqual(settled, atRelease + 1, "at most one emission was already in flight")
        let later = buffers.value
        await fulfillment(of: [buffers.expectation("another 50 buffers") { $0 >= later + 50 }],
                          timeout: defaultTimeout)
        XCTAssertEqual(handoffs.value, settled, "no handoff after the token was released")
        // Buffers flow as soon as the sink plays; the pipeline's own state commits a moment later (on a loaded
        // machine, visibly later), so give it a few seconds.
        var state = pipeline.currentState
        for _ in 0..<100 where state != .playing {
            try await Task.sleep(for: .milliseconds(50))
            state = pipeline.currentState
        }
        XCTAssertEqual(state, .playing, "the pipeline kept playing without the handoff connection")
        XCTAssertNil(weakSentinel.object, "disconnecting released the Swift closure")

        try pipeline.setState(.null)
        withExtendedLifetime(meter) {}
    }

    func testDetailedNotifySignal() throws {
        let sink = try Element(factory: "fakesink")
        let notified = Observed<[String]>([])
        let connection = try sink.connect("notify::sync") { arguments in
            notified.update { $0.append("\(arguments.count)") }
        }
        try sink.set("sync", true)
        try sink.set("async", false)            // another property: no notification
        try sink.set("sync", false)
        XCTAssertEqual(notified.value, ["2", "2"], "(object, GParamSpec) once per change of 'sync' only")
        XCTAssertTrue(connection.isConnected)
    }

    func testConnectingAnUnknownSignalThrows() throws {
        let sink = try Element(factory: "fakesink")
        XCTAssertThrowsError(try sink.connect("no-such-signal") { _ in }) { error in
            XCTAssertEqual(error as? GStreamerError, .noSuchSignal(element: "GstFakeSink", signal: "no-such-signal"))
        }
        XCTAssertThrowsError(try sink.connect("handoff::detail") { _ in }, "handoff is not a detailed signal")
    }

    func testBufferProbeSeesIncreasingTimestampsAndStopsAfterTokenIsReleased() async throws {
        let (pipeline, sink) = try makeEndlessPipeline()
        let timestamps = Observed<[PadProbeInfo]>([])
        let weakSentinel: WeakBox<Sentinel>
        var probe: PadProbe?
        do {
            let sentinel = Sentinel()
            weakSentinel = WeakBox(object: sentinel)
            probe = try sink.staticPad("sink").addProbe(.buffer) { [sentinel] info in
                _ = sentinel
                timestamps.update { $0.append(info) }
                return .ok
            }
        }
        let handoffs = Observed(0)
        let meter = try sink.connect("handoff") { _ in handoffs.update { $0 += 1 } }

        let ten = timestamps.expectation("10 buffers") { $0.count >= 10 }
        try pipeline.setState(.playing)
        await fulfillment(of: [ten], timeout: defaultTimeout)

        let first = Array(timestamps.value.prefix(10))
        let pts = first.compactMap(\.pts)
        XCTAssertEqual(pts.count, 10, "every buffer has a PTS")
        XCTAssertEqual(pts.first, .zero)
        for (a, b) in zip(pts, pts.dropFirst()) {
            XCTAssertLessThan(a, b, "PTS strictly increases")
            XCTAssertEqual((b - a).seconds, 1.0 / 30, accuracy: 1e-6, "30 fps")
        }
        for info in first {
            XCTAssertEqual(info.duration?.seconds ?? 0, 1.0 / 30, accuracy: 1e-6)
            XCTAssertNil(info.eventName)
        }

        XCTAssertNotNil(weakSentinel.object, "the installed probe's closure is alive")
        probe = nil
        let atRelease = timestamps.value.count
        let released = handoffs.value
        await fulfillment(of: [handoffs.expectation("50 more") { $0 >= released + 50 }], timeout: defaultTimeout)
        let settled = timestamps.value.count
        XCTAssertLessThanOrEqual(settled, atRelease + 1, "at most one probe call was already in flight")
        let later = handoffs.value
        await fulfillment(of: [handoffs.expectation("another 50") { $0 >= later + 50 }], timeout: defaultTimeout)
        XCTAssertEqual(timestamps.value.count, settled, "no probe call after the token was released")
        XCTAssertNil(weakSentinel.object, "removing the probe released the Swift closure")

        try pipeline.setState(.null)
        withExtendedLifetime(meter) {}
    }

    func testEventProbeSeesStreamEventsInOrder() async throws {
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc num-buffers=3 ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink name=sink sync=false
            """)
        let sink = try XCTUnwrap(pipeline.child(named: "sink"))
        let events = Observed<[String]>([])
        let probe = try sink.staticPad("sink").addProbe(.eventDownstream) { info in
            events.update { $0.append(info.eventName ?? "nil") }
            return .ok
        }
        let eos = events.expectation("eos event") { $0.contains("eos") }
        try pipeline.setState(.playing)
        await fulfillment(of: [eos], timeout: defaultTimeout)
        XCTAssertEqual(events.value, ["stream-start", "caps", "segment", "eos"])
        try pipeline.setState(.null)
        withExtendedLifetime(probe) {}
    }

    func testDroppingProbeKeepsBuffersFromTheSink() async throws {
        let pipeline = try Pipeline.parseLaunch("""
            videotestsrc num-buffers=20 ! video/x-raw,width=32,height=24,framerate=30/1 \
            ! fakesink name=sink signal-handoffs=true sync=false async=false
            """)
        let sink = try XCTUnwrap(pipeline.child(named: "sink"))
        let handoffs = Observed(0)
        let connection = try sink.connect("handoff") { _ in handoffs.update { $0 += 1 } }
        let seen = Observed(0)
        let probe = try sink.staticPad("sink").addProbe(.buffer) { _ in
            seen.update { $0 += 1 }
            return .drop
        }
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let eos = recorder.expectation("eos") { $0.isEOS }
        try pipeline.setState(.playing)
        await fulfillment(of: [eos], timeout: defaultTimeout)
        XCTAssertEqual(seen.value, 20)
        XCTAssertEqual(handoffs.value, 0, "every buffer was dropped before the sink")
        try pipeline.setState(.null)
        withExtendedLifetime((connection, probe)) {}
    }
}
