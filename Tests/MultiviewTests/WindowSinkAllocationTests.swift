import CGStreamer
import Foundation
import GStreamer
import Synchronization
import TestSupport
import XCTest
@testable import Multiview

/// A view's window sink lends its image pool to no upstream element: 1.22's ximagesink pool makes images with the
/// sink's X context without checking it still exists, and a decoder thread allocating from it after the sink had
/// left READY crashed the process (once in 30 runs of WindowFitTests). So the frames reaching the sink must be
/// plain memory (the sink copies them into its own images), never its own `ximage` memory.
final class WindowSinkAllocationTests: XCTestCase {
    /// Buffers seen at the sink, and how many of them were the sink's own ximage memory (C callback: no context).
    static let seen = Atomic<Int>(0)
    static let ximage = Atomic<Int>(0)

    func testFramesReachTheWindowSinkInMemoryOfTheirOwnNotTheSinksPool() async throws {
        try Services.requireDisplay()
        let window = try GridWindow(tileCount: 1, sizing: .fixed(width: 320, height: 180))
        window.start { _ in }
        defer { window.close() }
        let tile = try XCTUnwrap(window.tiles.first)
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: 1, name: "window"),
                                                                  video: .window(tile), audio: .fakeSink))
        try await player.load(MediaSource(TestMedia.angle1))
        try await player.play()
        // The sink bin joins the pipeline at the preroll (playbin builds its output then); the frames after are watched.
        let sink = try XCTUnwrap(player.pipeline.descendants { $0.name == "xsink" }.first, "no ximagesink in the view")
        let pad = try XCTUnwrap(gst_element_get_static_pad(sink.element, "sink"))
        defer { gst_object_unref(pad) }
        Self.seen.store(0, ordering: .relaxed)
        Self.ximage.store(0, ordering: .relaxed)
        let probe = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, { _, info, _ in
            guard let data = info?.pointee.data else { return GST_PAD_PROBE_OK }
            let buffer = data.assumingMemoryBound(to: GstBuffer.self)
            WindowSinkAllocationTests.seen.add(1, ordering: .relaxed)
            if gst_buffer_n_memory(buffer) > 0, let memory = gst_buffer_peek_memory(buffer, 0),
               gst_memory_is_type(memory, "ximage") != 0 {
                WindowSinkAllocationTests.ximage.add(1, ordering: .relaxed)
            }
            return GST_PAD_PROBE_OK
        }, nil, nil)
        defer { gst_pad_remove_probe(pad, probe) }
        let shown = await eventually(timeout: .seconds(20)) { Self.seen.load(ordering: .relaxed) >= 30 }
        XCTAssertTrue(shown, "30 frames reached the window sink (saw \(Self.seen.load(ordering: .relaxed)))")
        XCTAssertEqual(Self.ximage.load(ordering: .relaxed), 0,
                       "of \(Self.seen.load(ordering: .relaxed)) frames, these were allocated from the sink's own pool upstream")
        await player.stop()
    }
}
