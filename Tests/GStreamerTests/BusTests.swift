import CGStreamer
import Foundation
import GStreamer
import XCTest

/// `Bus.messages()` and the typed `BusMessage` translation, on real pipelines.
final class BusTests: XCTestCase {
    func testPlayToEndDeliversStateChangesAsyncDoneAndEOSInOrder() async throws {
        let pipeline = try Pipeline.parseLaunch(
            "videotestsrc num-buffers=30 ! video/x-raw,width=64,height=48,framerate=30/1 ! fakesink sync=false")
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let eos = recorder.expectation("eos") { $0.isEOS }

        XCTAssertEqual(try pipeline.setState(.playing), .async)
        await fulfillment(of: [eos], timeout: defaultTimeout)

        let events = recorder.messages.value.compactMap(\.pipelineEvent)
        // gst_element_set_state(PLAYING) from NULL: the bin commits READY→PAUSED when it has prerolled, posts
        // async-done, then continues to PLAYING; EOS comes once the sink has rendered the last buffer.
        XCTAssertEqual(events, [.state(.null, .ready), .state(.ready, .paused), .asyncDone,
                                .state(.paused, .playing), .eos], "\(events)")
        // The initial preroll has no running time: GST_CLOCK_TIME_NONE arrives as nil.
        if case .asyncDone(let source, let runningTime)? = recorder.first(where: { $0.pipelineEvent == .asyncDone }) {
            XCTAssertNil(runningTime)
            XCTAssertEqual(source.name, pipeline.name)
            XCTAssertEqual(source.path, "/GstPipeline:\(pipeline.name)")
        }
        // Children's messages arrive too, named and attributed to their factory.
        let sinkStates = recorder.messages.value.compactMap { message -> ElementState? in
            guard case .stateChanged(let source, _, let new, _) = message, source.factory == "fakesink" else { return nil }
            return new
        }
        XCTAssertEqual(sinkStates, [.ready, .paused, .playing])
        XCTAssertTrue(recorder.messages.value.contains {
            if case .streamStart(let source) = $0 { return source.isPipeline } else { return false }
        })
        XCTAssertTrue(recorder.messages.value.contains {
            if case .newClock(let source) = $0 { return source.isPipeline } else { return false }
        })
        XCTAssertFalse(recorder.messages.value.contains(where: \.isError))
        XCTAssertEqual(pipeline.currentState, .playing)
        XCTAssertEqual(try pipeline.setState(.null), .success)
        XCTAssertEqual(pipeline.currentState, .null)
    }

    func testErrorMessageCarriesDomainMessageDebugAndSource() async throws {
        let pipeline = try Pipeline.parseLaunch("filesrc name=reader location=/nonexistent/missing.mp4 ! fakesink")
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let error = recorder.expectation("error") { $0.isError }

        XCTAssertThrowsError(try pipeline.setState(.playing)) { thrown in
            XCTAssertEqual(thrown as? GStreamerError, .stateChangeFailed(element: pipeline.name, target: .playing))
        }
        await fulfillment(of: [error], timeout: defaultTimeout)

        let info = try XCTUnwrap(recorder.first(where: \.isError)?.errorInfo)
        XCTAssertEqual(info.domain, "gst-resource-error-quark")
        XCTAssertTrue(info.isResourceError)
        XCTAssertFalse(info.isStreamError)
        XCTAssertFalse(info.isCoreError)
        XCTAssertEqual(info.code, Int(GST_RESOURCE_ERROR_NOT_FOUND.rawValue))
        XCTAssertFalse(info.message.isEmpty)
        let debug = try XCTUnwrap(info.debug)
        XCTAssertTrue(debug.contains("/nonexistent/missing.mp4"), debug)
        XCTAssertEqual(info.source.name, "reader")
        XCTAssertEqual(info.source.factory, "filesrc")
        XCTAssertEqual(info.source.path, "/GstPipeline:\(pipeline.name)/GstFileSrc:reader")
        XCTAssertFalse(info.source.isPipeline)
        XCTAssertTrue(info.description.contains("reader"), info.description)
    }

    func testLevelElementMessagesAreTypedStructures() async throws {
        // 10 buffers of 100 ms of stereo sine: level posts one "level" structure per 100 ms interval.
        let pipeline = try Pipeline.parseLaunch("""
            audiotestsrc num-buffers=10 samplesperbuffer=4800 volume=0.5 \
            ! audio/x-raw,format=S16LE,rate=48000,channels=2 \
            ! level name=meter post-messages=true interval=100000000 ! fakesink sync=false
            """)
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let eos = recorder.expectation("eos") { $0.isEOS }
        try pipeline.setState(.playing)
        await fulfillment(of: [eos], timeout: defaultTimeout)

        let levels: [(BusMessage.Source, Structure)] = recorder.messages.value.compactMap {
            if case .element(let source, let structure) = $0, structure.name == "level" { return (source, structure) }
            return nil
        }
        XCTAssertGreaterThanOrEqual(levels.count, 9, "one per 100 ms of a 1 s stream")
        let (source, structure) = try XCTUnwrap(levels.first)
        XCTAssertEqual(source.name, "meter")
        XCTAssertEqual(source.factory, "level")
        XCTAssertEqual(structure.int("duration"), 100_000_000)
        XCTAssertEqual(structure.int("timestamp"), 0)
        XCTAssertEqual(structure.int("endtime"), 100_000_000)
        // rms/peak are GValueArrays: kept in serialised form, one value per channel.
        guard case .other(let rms)? = structure.fields["rms"] else {
            return XCTFail("rms: \(String(describing: structure.fields["rms"]))")
        }
        let channels = rms.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
            .split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        XCTAssertEqual(channels.count, 2, rms)
        // A 0.5 amplitude sine has an RMS of 0.5/√2: 20·log10(0.3536) ≈ -9.03 dB.
        for value in channels { XCTAssertEqual(value, -9.03, accuracy: 0.2, rms) }
        XCTAssertTrue(structure.serialized.hasPrefix("level"), structure.serialized)
    }

    func testApplicationMessagesFromPipelineAndChild() async throws {
        let pipeline = try Pipeline.parseLaunch("fakesrc name=src ! fakesink")
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let both = recorder.messages.expectation("two application messages") { messages in
            messages.filter { if case .application = $0 { return true } else { return false } }.count == 2
        }
        pipeline.postApplicationMessage("mv-wake")
        try XCTUnwrap(pipeline.child(named: "src")).postApplicationMessage("mv-child")
        await fulfillment(of: [both], timeout: defaultTimeout)

        let applications: [(BusMessage.Source, Structure)] = recorder.messages.value.compactMap {
            if case .application(let source, let structure) = $0 { return (source, structure) }
            return nil
        }
        XCTAssertEqual(applications.map(\.1.name), ["mv-wake", "mv-child"])
        XCTAssertEqual(applications.map(\.0.isPipeline), [true, false])
        XCTAssertEqual(applications.map(\.0.name), [pipeline.name, "src"])
        XCTAssertEqual(applications.first?.1.fields, [:])
    }

    /// Message types that are awkward to provoke for real are posted by hand, to check the translation.
    func testPostedBufferingWarningRequestStateClockLostAndMissingPluginAreTyped() async throws {
        let pipeline = try Pipeline.parseLaunch("fakesrc name=src ! fakesink")
        let bus = pipeline.bus()
        let recorder = BusRecorder(bus.messages())
        let source = try XCTUnwrap(pipeline.child(named: "src"))
        let object = UnsafeMutableRawPointer(source.gobject).assumingMemoryBound(to: GstObject.self)

        let done = recorder.expectation("last one") { message in
            if case .application(_, let structure) = message { return structure.name == "done" }
            return false
        }
        gst_element_post_message(source.element, gst_message_new_buffering(object, 42))
        let gerror = g_error_new_literal(gst_stream_error_quark(), Int32(GST_STREAM_ERROR_DECODE.rawValue),
                                         "bad frame")
        gst_element_post_message(source.element, gst_message_new_warning(object, gerror, "debug text"))
        g_error_free(gerror)
        gst_element_post_message(source.element, gst_message_new_request_state(object, GST_STATE_PAUSED))
        // (A bin swallows clock-lost from children for clocks it does not use: post it as the pipeline.)
        let clock = Clock.systemClock()
        gst_element_post_message(pipeline.element, gst_message_new_clock_lost(
            UnsafeMutableRawPointer(pipeline.gobject).assumingMemoryBound(to: GstObject.self), clock.clock))
        gst_element_post_message(source.element, gst_missing_element_message_new(source.element, "no-such-decoder"))
        pipeline.postApplicationMessage("done")
        await fulfillment(of: [done], timeout: defaultTimeout)

        let messages = recorder.messages.value
        XCTAssertEqual(messages.count, 6, "\(messages)")
        guard messages.count == 6 else { return }
        if case .buffering(let s, let percent) = messages[0] {
            XCTAssertEqual(percent, 42); XCTAssertEqual(s.name, "src")
        } else { XCTFail("\(messages[0])") }
        if case .warning(let info) = messages[1] {
            XCTAssertEqual(info.message, "bad frame")
            XCTAssertEqual(info.debug, "debug text")
            XCTAssertTrue(info.isStreamError)
            XCTAssertEqual(info.code, Int(GST_STREAM_ERROR_DECODE.rawValue))
            XCTAssertEqual(info.source.name, "src")
        } else { XCTFail("\(messages[1])") }
        if case .requestState(_, let state) = messages[2] { XCTAssertEqual(state, .paused) } else { XCTFail("\(messages[2])") }
        if case .clockLost(let s) = messages[3] { XCTAssertTrue(s.isPipeline) } else { XCTFail("\(messages[3])") }
        if case .missingPlugin(let s, let description, _) = messages[4] {
            XCTAssertEqual(s.name, "src")
            XCTAssertTrue(description.contains("no-such-decoder"), description)
        } else { XCTFail("\(messages[4])") }
    }

    func testPlaybin3PostsStreamCollectionOfARealFile() async throws {
        let uri = mediaURL("angle1-wide.mp4").absoluteString
        let playbin = try Pipeline(factory: "playbin3")
        try playbin.set("uri", uri)
        try playbin.set("video-sink", try Element(factory: "fakesink"))
        try playbin.set("audio-sink", try Element(factory: "fakesink"))
        let bus = playbin.bus()
        let recorder = BusRecorder(bus.messages())
        let collection = recorder.expectation("stream collection") {
            if case .streamCollection(_, let streams, _) = $0 { return streams.count >= 2 }
            return false
        }
        let prerolled = recorder.expectation("async-done") { $0.pipelineEvent == .asyncDone }
        let selected = recorder.expectation("streams-selected") {
            if case .streamsSelected = $0 { return true } else { return false }
        }
        try playbin.setState(.paused)
        await fulfillment(of: [collection, selected, prerolled], timeout: defaultTimeout)
        XCTAssertFalse(recorder.messages.value.contains(where: \.isError),
                       "\(recorder.messages.value.compactMap(\.errorInfo))")

        guard case .streamCollection(_, let streams, _)? = recorder.first(where: {
            if case .streamCollection(_, let s, _) = $0 { return s.count >= 2 } else { return false }
        }) else { return XCTFail("no collection") }
        XCTAssertEqual(streams.count, 2, "\(streams)")
        let video = try XCTUnwrap(streams.first { $0.kind == .video })
        let audio = try XCTUnwrap(streams.first { $0.kind == .audio })
        XCTAssertTrue(video.caps?.hasPrefix("video/x-h264") ?? false, "\(video)")
        XCTAssertTrue(audio.caps?.hasPrefix("audio/mpeg") ?? false, "\(audio)")
        XCTAssertTrue(video.codec?.contains("H.264") ?? false, "\(video)")
        XCTAssertFalse(video.id.isEmpty)
        XCTAssertNotEqual(video.id, audio.id)

        guard case .streamsSelected(_, let chosen)? = recorder.first(where: {
            if case .streamsSelected = $0 { return true } else { return false }
        }) else { return XCTFail("no selection") }
        XCTAssertEqual(Set(chosen.map(\.kind)), [.video, .audio])

        let duration = try XCTUnwrap(playbin.queryDuration())
        XCTAssertEqual(duration.seconds, 24, accuracy: 0.2)
        XCTAssertEqual(playbin.queryPosition()?.seconds ?? -1, 0, accuracy: 0.05)

        // A flushing seek in PAUSED prerolls again (a second async-done) at the new position.
        let prerolls = recorder.messages.value.filter { $0.pipelineEvent == .asyncDone }.count
        let seeked = recorder.messages.expectation("async-done after seek") {
            $0.filter { $0.pipelineEvent == .asyncDone }.count > prerolls
        }
        try playbin.seek(flags: [.flush, .accurate], position: .seconds(10))
        await fulfillment(of: [seeked], timeout: defaultTimeout)
        XCTAssertEqual(playbin.queryPosition()?.seconds ?? -1, 10, accuracy: 0.05)
        try playbin.setState(.null)
    }

    func testStreamFinishesWhenBusIsReleased() async throws {
        let pipeline = try Pipeline.parseLaunch("fakesrc ! fakesink")
        var bus: Bus? = pipeline.bus()
        let recorder = BusRecorder(bus!.messages())
        let woken = recorder.expectation("application") {
            if case .application = $0 { return true } else { return false }
        }
        pipeline.postApplicationMessage("ping")
        await fulfillment(of: [woken], timeout: defaultTimeout)
        XCTAssertFalse(recorder.finished.value)
        let finished = recorder.finished.expectation("finished") { $0 }
        bus = nil
        await fulfillment(of: [finished], timeout: defaultTimeout)

        // The sync handler was removed with the old wrapper, so a new consumer can be installed.
        let again = pipeline.bus()
        let second = BusRecorder(again.messages())
        let pong = second.expectation("application") {
            if case .application(_, let structure) = $0 { return structure.name == "pong" } else { return false }
        }
        pipeline.postApplicationMessage("pong")
        await fulfillment(of: [pong], timeout: defaultTimeout)
        XCTAssertEqual(recorder.messages.value.count, 1, "the first stream received nothing after it finished")
    }
}
