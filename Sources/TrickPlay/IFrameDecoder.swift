import CGStreamer
import Foundation
import GStreamer

/// One decoded picture, packed RGB (3 bytes per pixel, no row padding), row-major from the top-left.
public struct DecodedFrame: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var rgb: [UInt8]

    /// As a binary PPM (P6) file: what `preview N T PATH` writes.
    public var ppm: Data {
        var data = Data("P6\n\(width) \(height)\n255\n".utf8)
        data.append(contentsOf: rgb)
        return data
    }
}

/// Decodes the MPEG-TS bytes of one I-frame (PAT/PMT + the IDR access unit) into an RGB picture:
/// `appsrc ! tsdemux ! h264parse ! avdec_h264 ! videoconvert ! videoscale ! RGB ! appsink`, one short pipeline
/// per frame (an I-frame needs no state from the previous one, and a fresh pipeline cannot be left wedged by a
/// bad range).
///
/// Owner: the serial `queue`. Pipelines are built, fed and pulled only there, because the appsink pull blocks
/// (up to `timeout`) and must not block Swift's cooperative threads. The class holds only immutable values.
public final class IFrameDecoder: Sendable {
    private let queue = DispatchQueue(label: "multiview.trickplay.decoder")
    private let timeout: Duration

    public init(timeout: Duration = .seconds(5)) { self.timeout = timeout }

    /// Decodes `bytes` (from `url`, for messages); scales to `width`×`height` when given.
    public func decode(_ bytes: Data, from url: URL, width: Int? = nil,
                       height: Int? = nil) async throws(TrickPlayError) -> DecodedFrame {
        let timeout = self.timeout
        let result: Result<DecodedFrame, TrickPlayError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Self.decodeNow(bytes, url: url, width: width, height: height,
                                                              timeout: timeout))
            }
        }
        return try result.get()
    }

    private static func decodeNow(_ bytes: Data, url: URL, width: Int?, height: Int?,
                                  timeout: Duration) -> Result<DecodedFrame, TrickPlayError> {
        func failure(_ reason: String) -> Result<DecodedFrame, TrickPlayError> {
            .failure(.decode(url: url.absoluteString, reason: reason))
        }
        var size = ""
        if let width, let height { size = ",width=\(width),height=\(height),pixel-aspect-ratio=1/1" }
        let description = """
            appsrc name=src format=bytes caps="video/mpegts,systemstream=(boolean)true,packetsize=(int)188" \
            ! tsdemux ! h264parse ! avdec_h264 ! videoconvert ! videoscale \
            ! video/x-raw,format=RGB\(size) ! appsink name=sink sync=false
            """
        let pipeline: Pipeline
        do { pipeline = try Pipeline.parseLaunch(description) } catch { return failure("\(error)") }
        guard let source = pipeline.child(named: "src"), let sink = pipeline.child(named: "sink") else {
            return failure("decoder pipeline incomplete")
        }
        // A refused NULL changes nothing here: the pipeline is released right after, and its deinit asks again.
        defer { do { try pipeline.setState(.null) } catch {} }
        do { _ = try pipeline.setState(.playing) } catch { return failure("\(error)") }

        let appSource = UnsafeMutableRawPointer(source.element).assumingMemoryBound(to: GstAppSrc.self)
        let appSink = UnsafeMutableRawPointer(sink.element).assumingMemoryBound(to: GstAppSink.self)
        guard let buffer = gst_buffer_new_allocate(nil, gsize(bytes.count), nil) else { return failure("no memory") }
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { _ = gst_buffer_fill(buffer, 0, base, gsize(raw.count)) }
        }
        // push_buffer takes the buffer's reference.
        guard gst_app_src_push_buffer(appSource, buffer) == GST_FLOW_OK,
              gst_app_src_end_of_stream(appSource) == GST_FLOW_OK else { return failure("decoder refused the bytes") }

        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000
            + UInt64(timeout.components.attoseconds / 1_000_000_000)
        guard let sample = gst_app_sink_try_pull_sample(appSink, GstClockTime(nanoseconds)) else {
            return failure(busError(pipeline) ?? "no picture decoded (not an I-frame, or a cut range)")
        }
        defer { gst_sample_unref(sample) }
        guard let caps = gst_sample_get_caps(sample), let picture = gst_sample_get_buffer(sample) else {
            return failure("decoded sample without caps or buffer")
        }
        var info = GstVideoInfo()
        guard gst_video_info_from_caps(&info, caps) != 0 else { return failure("unreadable video caps") }
        let w = Int(info.width), h = Int(info.height), stride = Int(info.stride.0)
        var map = GstMapInfo()
        guard gst_buffer_map(picture, &map, GST_MAP_READ) != 0 else { return failure("cannot map the picture") }
        defer { gst_buffer_unmap(picture, &map) }
        guard Int(map.size) >= stride * (h - 1) + w * 3 else { return failure("picture smaller than its caps") }
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        rgb.withUnsafeMutableBytes { out in
            for row in 0..<h {
                memcpy(out.baseAddress! + row * w * 3, map.data + row * stride, w * 3)
            }
        }
        return .success(DecodedFrame(width: w, height: h, rgb: rgb))
    }

    /// Pushes bytes as one buffer into an appsrc element (which takes the buffer's reference).
    static func push<C: Collection<UInt8>>(_ bytes: C, into element: Element) {
        let appSource = UnsafeMutableRawPointer(element.element).assumingMemoryBound(to: GstAppSrc.self)
        guard let buffer = gst_buffer_new_allocate(nil, gsize(bytes.count), nil) else { return }
        _ = bytes.withContiguousStorageIfAvailable { raw in
            if let base = raw.baseAddress { _ = gst_buffer_fill(buffer, 0, base, gsize(raw.count)) }
        }
        _ = gst_app_src_push_buffer(appSource, buffer)
    }

    /// The first error the pipeline posted, if any.
    private static func busError(_ pipeline: Pipeline) -> String? {
        guard let bus = gst_element_get_bus(pipeline.element) else { return nil }
        defer { gst_object_unref(bus) }
        guard let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) else { return nil }
        defer { gst_message_unref(message) }
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &error, &debug)
        defer { if let error { g_error_free(error) }; g_free(debug) }
        return error.map { String(cString: $0.pointee.message) }
    }
}
