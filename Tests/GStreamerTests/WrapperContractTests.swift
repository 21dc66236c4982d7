import CGStreamer
import Foundation
import GStreamer
import XCTest

/// Contracts that were broken once (found while writing the wrapper tests) and must stay fixed.
final class WrapperContractTests: XCTestCase {
    /// appsink's "new-sample" returns a GstFlowReturn (an enum): the handler's return value must reach
    /// GStreamer, so returning ERROR stops the stream with an error.
    func testSignalReturnValueOfEnumTypeReachesGStreamer() throws {
        let pipeline = try Pipeline.parseLaunch("videotestsrc num-buffers=50 ! appsink name=sink emit-signals=true sync=false")
        let sink = try XCTUnwrap(pipeline.child(named: "sink"))
        let connection = try sink.connect("new-sample") { args in
            args.setReturn(int: Int(GST_FLOW_ERROR.rawValue))
        }
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let failed = recorder.expectation("error from the flow return") { $0.isError }
        try pipeline.setState(.playing)
        wait(for: [failed], timeout: defaultTimeout)
        XCTAssertNil(recorder.first { $0.isEOS }, "the stream must not end normally")
        try pipeline.setState(.null)
        withExtendedLifetime(connection) {}
    }

    func testSetFromStringRefusesReadOnlyProperty() throws {
        let queue = try Element(factory: "queue")
        XCTAssertThrowsError(try queue.set("current-level-buffers", fromString: "3")) { error in
            XCTAssertEqual(error as? GStreamerError, .propertyNotWritable(element: queue.name, property: "current-level-buffers"))
        }
    }

    func testValueOutsideTheDeclaredRangeThrows() throws {
        let source = try Element(factory: "videotestsrc")
        XCTAssertThrowsError(try source.set("num-buffers", -5)) { error in
            XCTAssertEqual(error as? GStreamerError, .invalidPropertyValue(element: source.name, property: "num-buffers", value: "-5"))
        }
        XCTAssertEqual(try source.get("num-buffers", as: Int.self), -1, "the old value is kept")
        XCTAssertThrowsError(try source.set("num-buffers", fromString: "-7"))
        try source.set("num-buffers", 10)
        XCTAssertEqual(try source.get("num-buffers", as: Int.self), 10)
    }

    /// A probe that removed itself (returned `.remove`) is not removed a second time when its token goes.
    func testSelfRemovingProbeTokenReleasesCleanly() throws {
        let pipeline = try Pipeline.parseLaunch("videotestsrc num-buffers=5 ! fakesink name=sink sync=false")
        let pad = try XCTUnwrap(pipeline.child(named: "sink")).staticPad("sink")
        let calls = Observed(0)
        var probe: PadProbe? = pad.addProbe(.buffer) { _ in
            calls.update { $0 += 1 }
            return .remove
        }
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let eos = recorder.expectation("eos") { $0.isEOS }
        try pipeline.setState(.playing)
        wait(for: [eos], timeout: defaultTimeout)
        XCTAssertEqual(calls.value, 1, "a removed probe is called once")
        probe = nil
        XCTAssertNil(probe)
        try pipeline.setState(.null)
    }
}
