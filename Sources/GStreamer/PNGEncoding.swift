import CGStreamer
import Foundation

/// Why a picture could not be encoded as PNG.
public enum PNGEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not width × height packed RGB pixels (or the size is empty).
    case badPicture(width: Int, height: Int, bytes: Int)
    /// GStreamer's conversion (videoconvert ! pngenc) failed or timed out; its message.
    case encoderFailed(String)

    public var description: String {
        switch self {
        case .badPicture(let w, let h, let n): return "not a \(w)x\(h) RGB picture (\(n) bytes, expected \(w * h * 3))"
        case .encoderFailed(let message): return "PNG encoding failed: \(message)"
        }
    }
}

/// PNG files from packed RGB pictures (3 bytes per pixel, no row padding, row-major from the top-left), encoded
/// by GStreamer's `pngenc`: `gst_video_convert_sample` to `image/png` runs a small
/// `appsrc ! videoconvert ! pngenc ! appsink` pipeline for the one picture.
///
/// Owner: the serial `queue`. The conversion blocks its thread until the pipeline has produced the file (or
/// `timeout`), so `encode` runs there and never on Swift's cooperative threads; the enum holds no state.
public enum PNGEncoding {
    private static let queue = DispatchQueue(label: "multiview.png-encoding")

    /// The PNG file of `rgb` (width × height × 3 bytes), encoded on the encoding queue.
    public static func encode(rgb: [UInt8], width: Int, height: Int,
                              timeout: Duration = .seconds(10)) async throws(PNGEncodingError) -> Data {
        let result: Result<Data, PNGEncodingError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(PNGEncodingError) in
                    try encodeBlocking(rgb: rgb, width: width, height: height, timeout: timeout)
                })
            }
        }
        return try result.get()
    }

    /// The same, on the calling thread, which it blocks until the file is made: for callers already on their own
    /// thread or queue (never from a Swift task).
    public static func encodeBlocking(rgb: [UInt8], width: Int, height: Int,
                                      timeout: Duration = .seconds(10)) throws(PNGEncodingError) -> Data {
        guard width > 0, height > 0, rgb.count == width * height * 3 else {
            throw .badPicture(width: width, height: height, bytes: rgb.count)
        }
        guard GStreamer.ensureInitialized() else { throw .encoderFailed("GStreamer could not be initialised") }
        var info = GstVideoInfo()
        guard gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGB, guint(width), guint(height)) != 0,
              let caps = gst_video_info_to_caps(&info) else {
            throw .badPicture(width: width, height: height, bytes: rgb.count)
        }
        defer { gst_caps_unref(caps) }
        guard let buffer = gst_buffer_new_allocate(nil, info.size, nil) else { throw .encoderFailed("no memory") }
        defer { gst_buffer_unref(buffer) }
        // GStreamer's RGB rows are padded to 4 bytes; ours are not.
        let stride = Int(info.stride.0), rowBytes = width * 3
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_WRITE) != 0 else { throw .encoderFailed("cannot map a buffer") }
        rgb.withUnsafeBytes { source in
            for row in 0..<height {
                memcpy(map.data + row * stride, source.baseAddress! + row * rowBytes, rowBytes)
            }
        }
        gst_buffer_unmap(buffer, &map)

        guard let sample = gst_sample_new(buffer, caps, nil, nil) else { throw .encoderFailed("no memory") }
        defer { gst_sample_unref(sample) }
        guard let pngCaps = gst_caps_new_empty_simple("image/png") else { throw .encoderFailed("no memory") }
        defer { gst_caps_unref(pngCaps) }
        var error: UnsafeMutablePointer<GError>?
        let nanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000
            + UInt64(timeout.components.attoseconds / 1_000_000_000)
        guard let png = gst_video_convert_sample(sample, pngCaps, GstClockTime(nanoseconds), &error) else {
            defer { if let error { g_error_free(error) } }
            throw .encoderFailed(error.map { String(cString: $0.pointee.message) } ?? "no picture within \(timeout)")
        }
        defer { gst_sample_unref(png) }
        guard let encoded = gst_sample_get_buffer(png) else { throw .encoderFailed("converted sample without a buffer") }
        var out = GstMapInfo()
        guard gst_buffer_map(encoded, &out, GST_MAP_READ) != 0 else { throw .encoderFailed("cannot map the PNG") }
        defer { gst_buffer_unmap(encoded, &out) }
        return Data(bytes: out.data, count: Int(out.size))
    }
}
