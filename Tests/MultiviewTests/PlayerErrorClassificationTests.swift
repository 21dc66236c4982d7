import CGStreamer
import GStreamer
import XCTest
@testable import Multiview

/// GStreamer errors to typed causes, without a pipeline: `classify` is pure (the file-system check is its
/// caller's), and the GError domain/code mapping lives in the GStreamer module. Milliseconds.
final class PlayerErrorClassificationTests: XCTestCase {
    private let demuxer = BusMessage.Source(name: "qtdemux0", path: "/playbin/qtdemux0", isPipeline: false, factory: "qtdemux")
    private let file = MediaSource("/media/clip.mp4")

    private func info(_ domain: String, _ code: UInt32, _ text: String = "it broke",
                      source: BusMessage.Source? = nil) -> BusMessage.ErrorInfo {
        BusMessage.ErrorInfo(domain: domain, code: Int(code), message: text, source: source ?? demuxer)
    }

    func testErrorCodesAreMappedOnceInTheGStreamerModule() {
        XCTAssertEqual(GStreamerErrorCode(domain: "gst-stream-error-quark", code: Int(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)),
                       .stream(.codecNotFound))
        XCTAssertEqual(GStreamerErrorCode(domain: "gst-core-error-quark", code: Int(GST_CORE_ERROR_MISSING_PLUGIN.rawValue)),
                       .core(.missingPlugin))
        XCTAssertEqual(GStreamerErrorCode(domain: "gst-resource-error-quark", code: Int(GST_RESOURCE_ERROR_NOT_FOUND.rawValue)),
                       .resource(.notFound))
        XCTAssertEqual(GStreamerErrorCode(domain: "gst-stream-error-quark", code: 999), .stream(.other(999)))
        XCTAssertEqual(GStreamerErrorCode(domain: "my-element-quark", code: 3), .other(domain: "my-element-quark", code: 3))
    }

    func testStreamErrors() {
        let s = "gst-stream-error-quark"
        XCTAssertEqual(PlayerError.classify(info(s, GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue, "no h265"), source: file,
                                            fileAccess: .readable, missingPlugins: []), .unsupportedCodec("no h265"))
        XCTAssertEqual(PlayerError.classify(info(s, GST_STREAM_ERROR_DEMUX.rawValue, "bad atom"), source: file,
                                            fileAccess: .readable, missingPlugins: []), .corruptMedia("bad atom"))
        XCTAssertEqual(PlayerError.classify(info(s, GST_STREAM_ERROR_DECODE.rawValue, "bad slice"), source: file,
                                            fileAccess: .readable, missingPlugins: []), .corruptMedia("cannot decode: bad slice"))
        XCTAssertEqual(PlayerError.classify(info(s, GST_STREAM_ERROR_FAILED.rawValue, "No suitable decoder"), source: file,
                                            fileAccess: .readable, missingPlugins: []), .noDecodableStream("No suitable decoder"))
        XCTAssertEqual(PlayerError.classify(info(s, GST_STREAM_ERROR_FAILED.rawValue, "Internal data stream error."), source: file,
                                            fileAccess: .readable, missingPlugins: []), .gstreamer("Internal data stream error."))
    }

    func testMissingDecodersMakeAnyErrorNoDecodableStream() {
        let cause = PlayerError.classify(info("gst-stream-error-quark", GST_STREAM_ERROR_FAILED.rawValue, "Internal data stream error."),
                                         source: file, fileAccess: .readable,
                                         missingPlugins: ["video/x-unknown decoder", "audio/x-unknown decoder", "video/x-unknown decoder"])
        XCTAssertEqual(cause, .noDecodableStream("no decoder installed for video/x-unknown decoder, audio/x-unknown decoder"))
    }

    func testMediaWhoseEveryAudioAndVideoStreamLacksItsDecoderIsUndecodableAtOnce() {
        func stream(_ kind: BusMessage.StreamInfo.Kind, _ caps: String) -> BusMessage.StreamInfo {
            BusMessage.StreamInfo(id: caps, kind: kind, caps: caps, language: nil, codec: nil)
        }
        let streams = [stream(.video, "video/x-unknown, codec-id=(string)V_XXXXX"), stream(.audio, "audio/x-unknown, codec-id=(string)A_XYZW"),
                       stream(.text, "subtitle/x-unknown")]
        let plugins = ["video/x-unknown decoder", "audio/x-unknown decoder"]
        XCTAssertEqual(PlayerError.undecodableMedia(streams: streams, missingDecoders: ["video/x-unknown", "audio/x-unknown"],
                                                    missingPlugins: plugins),
                       .noDecodableStream("no decoder installed for video/x-unknown decoder, audio/x-unknown decoder"))
        XCTAssertNil(PlayerError.undecodableMedia(streams: streams, missingDecoders: ["video/x-unknown"], missingPlugins: plugins),
                     "the audio may still decode: not yet")
        XCTAssertNil(PlayerError.undecodableMedia(streams: [], missingDecoders: ["video/x-unknown"], missingPlugins: plugins),
                     "no stream collection yet")
        XCTAssertNil(PlayerError.undecodableMedia(streams: [stream(.video, "video/x-h264, stream-format=avc")],
                                                  missingDecoders: ["audio/x-unknown"], missingPlugins: plugins))
    }

    func testResourceErrorsSayWhatTheFileSystemSaid() {
        let r = "gst-resource-error-quark", code = GST_RESOURCE_ERROR_OPEN_READ.rawValue
        XCTAssertEqual(PlayerError.classify(info(r, code), source: file, fileAccess: .missing, missingPlugins: []),
                       .fileNotFound(path: "/media/clip.mp4"))
        XCTAssertEqual(PlayerError.classify(info(r, code), source: file, fileAccess: .unreadable, missingPlugins: []),
                       .permissionDenied(path: "/media/clip.mp4"))
        XCTAssertEqual(PlayerError.classify(info(r, code), source: file, fileAccess: .readable, missingPlugins: []),
                       .corruptMedia("it broke"))
        let sink = BusMessage.Source(name: "xsink", path: "/playbin/xsink", isPipeline: false, factory: "ximagesink")
        XCTAssertEqual(PlayerError.classify(info(r, code, source: sink), source: file, fileAccess: .readable, missingPlugins: []),
                       .output("it broke"))
        XCTAssertEqual(PlayerError.classify(info(r, code), source: MediaSource("http://host/a.m3u8"), fileAccess: nil,
                                            missingPlugins: []), .network("it broke"))
    }

    func testCoreMissingPluginAndTheRest() {
        XCTAssertEqual(PlayerError.classify(info("gst-core-error-quark", GST_CORE_ERROR_MISSING_PLUGIN.rawValue, "no x"),
                                            source: file, fileAccess: .readable, missingPlugins: []), .missingElement("no x"))
        XCTAssertEqual(PlayerError.classify(info("gst-library-error-quark", 3, "lib"), source: file, fileAccess: .readable,
                                            missingPlugins: []), .gstreamer("lib"))
    }

    func testDescriptionsKeepTheirLines() {
        let view = ViewIdentity(number: 2, name: "b.mp4")
        XCTAssertEqual(PlayerError(view: view, cause: .noMediaLoaded).description, "view 2 (b.mp4): no media loaded")
        XCTAssertEqual(PlayerError(view: view, cause: .invalidRate(0)).description, "view 2 (b.mp4): rate must be positive")
        XCTAssertEqual(PlayerError(view: view, cause: .seekPastEnd(target: .seconds(42), duration: .seconds(24))).description,
                       "view 2 (b.mp4): seek past the end")
    }
}
