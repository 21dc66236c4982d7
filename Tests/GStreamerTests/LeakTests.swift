import GStreamer
import XCTest

/// Nothing the wrapper hands out keeps a pipeline alive once the Swift owners are gone.
final class LeakTests: XCTestCase {
    func testPlayedStoppedPipelineIsFreedAtEndOfScope() throws {
        let pipelineRef: WeakObjectReference
        let sinkRef: WeakObjectReference
        let padRef: WeakObjectReference
        do {
            let pipeline = try Pipeline.parseLaunch("""
                videotestsrc ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink name=sink sync=false
                """)
            let sink = try XCTUnwrap(pipeline.child(named: "sink"))
            pipelineRef = pipeline.weakReference()
            sinkRef = sink.weakReference()
            padRef = try sink.staticPad("sink").weakReference()
            try pipeline.setState(.playing)
            XCTAssertEqual(try pipeline.waitForState(timeout: .seconds(defaultTimeout)), .playing)
            try pipeline.setState(.null)
            XCTAssertEqual(pipeline.currentState, .null)
            XCTAssertEqual(pipeline.referenceCount, 1, "only the Swift owner holds the stopped pipeline")
            XCTAssertTrue(pipelineRef.isAlive)
        }
        XCTAssertFalse(pipelineRef.isAlive)
        XCTAssertFalse(sinkRef.isAlive)
        XCTAssertFalse(padRef.isAlive)
    }

    func testPipelineReleasedWhilePlayingIsStoppedAndFreed() async throws {
        let pipelineRef: WeakObjectReference
        let buffers = Observed(0)
        do {
            let pipeline = try Pipeline.parseLaunch("""
                videotestsrc ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink name=sink sync=false
                """)
            pipelineRef = pipeline.weakReference()
            let probe = try XCTUnwrap(pipeline.child(named: "sink")).staticPad("sink").addProbe(.buffer) { _ in
                buffers.update { $0 += 1 }
                return .ok
            }
            let flowing = buffers.expectation("buffers flow") { $0 >= 5 }
            try pipeline.setState(.playing)
            await fulfillment(of: [flowing], timeout: defaultTimeout)
            withExtendedLifetime(probe) {}
        }
        // Pipeline.deinit set it to NULL synchronously: no streaming thread survives it.
        XCTAssertFalse(pipelineRef.isAlive)
    }

    func testPipelineWithSignalAndProbeIsFreedAndTheirClosuresReleased() async throws {
        let pipelineRef: WeakObjectReference
        let sinkRef: WeakObjectReference
        let outlivingConnection: SignalConnection
        let signalClosure: WeakBox<Sentinel>
        let probeClosure: WeakBox<Sentinel>
        do {
            let pipeline = try Pipeline.parseLaunch("""
                videotestsrc num-buffers=15 ! video/x-raw,width=32,height=24,framerate=30/1 \
                ! fakesink name=sink sync=false signal-handoffs=true
                """)
            pipelineRef = pipeline.weakReference()
            let sink = try XCTUnwrap(pipeline.child(named: "sink"))
            sinkRef = sink.weakReference()

            let handoffs = Observed(0)
            let signalSentinel = Sentinel(), probeSentinel = Sentinel()
            signalClosure = WeakBox(object: signalSentinel)
            probeClosure = WeakBox(object: probeSentinel)
            outlivingConnection = try sink.connect("handoff") { [signalSentinel] _ in
                _ = signalSentinel
                handoffs.update { $0 += 1 }
            }
            let probe = try sink.staticPad("sink").addProbe(.buffer) { [probeSentinel] _ in
                _ = probeSentinel
                return .ok
            }
            let all = handoffs.expectation("15 handoffs") { $0 == 15 }
            try pipeline.setState(.playing)
            await fulfillment(of: [all], timeout: defaultTimeout)
            try pipeline.setState(.null)
            XCTAssertTrue(outlivingConnection.isConnected)
            // Settles rather than is at once: the stream's end (num-buffers) races the stop, and GStreamer's own
            // handling of it can hold the pipeline a moment past `setState(.null)` (2 refs right after it, once in
            // a repeat run on e67ca27). A leak stays.
            let count = await settledReferenceCount(of: pipeline)
            XCTAssertEqual(count, 1, "only the Swift owner holds the stopped pipeline")
            withExtendedLifetime(probe) {}
        }
        XCTAssertFalse(pipelineRef.isAlive)
        XCTAssertFalse(sinkRef.isAlive)
        XCTAssertFalse(outlivingConnection.isConnected, "the object is gone, so is the handler")
        XCTAssertNil(signalClosure.object, "the signal closure was finalised with its object")
        XCTAssertNil(probeClosure.object, "the probe closure was released with its token")
    }

    /// Regression test for the bus sync handler: it returns GST_BUS_DROP, so it must unref every message, or
    /// each message (and through its `src`, the pipeline and its children) leaks.
    func testPipelineWithConsumedBusIsFreedAndStreamFinishes() async throws {
        let pipelineRef: WeakObjectReference
        let sinkRef: WeakObjectReference
        let recorder: BusRecorder
        do {
            let pipeline = try Pipeline.parseLaunch("""
                videotestsrc num-buffers=15 ! video/x-raw,width=32,height=24,framerate=30/1 ! fakesink name=sink sync=false
                """)
            pipelineRef = pipeline.weakReference()
            sinkRef = try XCTUnwrap(pipeline.child(named: "sink")).weakReference()
            let bus = pipeline.bus()
            recorder = BusRecorder(bus.messages())
            let eos = recorder.expectation("eos") { $0.isEOS }
            try pipeline.setState(.playing)
            await fulfillment(of: [eos], timeout: defaultTimeout)
            try pipeline.setState(.null)
            XCTAssertEqual(pipeline.referenceCount, 1, "no message still holds the pipeline")
            XCTAssertFalse(recorder.finished.value, "the stream lives as long as the Bus wrapper")
        }
        // Bus wrapper released → sync handler removed → stream finished → consumer task ended.
        await fulfillment(of: [recorder.finished.expectation("stream finished") { $0 }], timeout: defaultTimeout)
        XCTAssertFalse(pipelineRef.isAlive)
        XCTAssertFalse(sinkRef.isAlive)
    }

    /// The object's reference count once it stops changing to 1 (polled for up to 2 s): a count above 1 that stays
    /// is a leak; one that drops back is another thread finishing with it.
    private func settledReferenceCount(of pipeline: Pipeline) async -> UInt32 {
        let deadline = ContinuousClock.now + .seconds(2)
        while pipeline.referenceCount != 1 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return pipeline.referenceCount
    }
}
