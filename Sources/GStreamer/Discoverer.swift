import CGStreamer
import Foundation

/// What `GstDiscoverer` finds in a file or URI: container, duration and every stream.
public struct MediaInfo: Sendable, Equatable {
    public struct Stream: Sendable, Equatable {
        public enum Kind: String, Sendable { case video, audio, subtitle, other }
        public var kind: Kind
        public var codec: String
        public var caps: String
        public var width: Int?
        public var height: Int?
        public var frameRate: Double?
        public var channels: Int?
        public var sampleRate: Int?
        public var bitrate: Int?
        public var language: String?
    }

    public var uri: String
    public var duration: ClockTime?
    public var container: String?
    public var isSeekable: Bool
    public var isLive: Bool
    public var streams: [Stream]
    /// The media's title tag, when it has one.
    public var title: String?

    /// Runs the discoverer synchronously (it spins its own pipeline). Throws the discoverer's error for
    /// missing, unreadable or undecodable media.
    public static func discover(uri: String, timeout: ClockTime = .seconds(10)) throws -> MediaInfo {
        guard GStreamer.ensureInitialized() else { throw GStreamerError.initializationFailed }
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(UInt(timeout.nanoseconds), &error) else {
            let e = error.map { GLibError($0) }
            if let error { g_error_free(error) }
            throw e ?? GLibError(domain: "discoverer", code: 0, message: "cannot create discoverer")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        defer { if let info { g_object_unref(UnsafeMutableRawPointer(info)) } }
        if let error {
            let e = GLibError(error)
            g_error_free(error)
            throw e
        }
        guard let info else { throw GLibError(domain: "discoverer", code: 0, message: "no information") }
        let result = gst_discoverer_info_get_result(info)
        if result == GST_DISCOVERER_MISSING_PLUGINS {
            throw GLibError(domain: "discoverer", code: Int(result.rawValue), message: "missing plugins to decode this media")
        }
        guard result == GST_DISCOVERER_OK else {
            throw GLibError(domain: "discoverer", code: Int(result.rawValue), message: "cannot discover (result \(result.rawValue))")
        }

        var media = MediaInfo(uri: uri, duration: ClockTime(raw: gst_discoverer_info_get_duration(info)),
                              container: nil, isSeekable: gst_discoverer_info_get_seekable(info) != 0,
                              isLive: gst_discoverer_info_get_live(info) != 0, streams: [])
        if let top = gst_discoverer_info_get_stream_info(info) {
            // The container's own title (not a track's name, which the merged tag list would also offer).
            if isA(top, gst_discoverer_container_info_get_type()),
               let tags = gst_discoverer_container_info_get_tags(top) {
                var value: UnsafeMutablePointer<gchar>?
                if gst_tag_list_get_string(tags, "title", &value) != 0, let value {
                    media.title = String(cString: value)
                    g_free(value)
                }
            }
            if g_type_check_instance_is_a(UnsafeMutablePointer<GTypeInstance>(top),
                                          gst_discoverer_container_info_get_type()) != 0,
               let caps = gst_discoverer_stream_info_get_caps(top) {
                media.container = codecDescription(caps)
                gst_caps_unref(caps)
            }
            g_object_unref(UnsafeMutableRawPointer(top))
        }
        let list = gst_discoverer_info_get_stream_list(info)
        var node = list
        var unnamed: [Int: String] = [:]   // audio and subtitle streams without a language: index → stream id
        while let current = node {
            if let raw = current.pointee.data {
                let s = stream(OpaquePointer(raw))
                if s.language == nil, s.kind == .audio || s.kind == .subtitle,
                   let id = gst_discoverer_stream_info_get_stream_id(OpaquePointer(raw)) {
                    unnamed[media.streams.count] = String(cString: id)
                }
                media.streams.append(s)
            }
            node = current.pointee.next
        }
        gst_discoverer_stream_info_list_free(list)
        // The discoverer may have finished before a sparse stream's tags came (see StreamLanguageScan): read
        // them from the container for the streams still without a language.
        // Not for an HLS playlist: its languages are the playlist's to say (`multiview info` reads its
        // renditions), and the scan's brief pipeline started and stopped adaptivedemux2 within moments, which in
        // GStreamer 1.22 can hang the stop for good (the demuxer joins its loop thread, whose main loop never got
        // the quit: `info` on an HLS master hung 1 run in 3 by hand, and once in a test-repeat run).
        if !unnamed.isEmpty, !Self.isPlaylist(uri) {
            let found = StreamLanguageScan.languages(uri: uri, wanted: Set(unnamed.values))
            for (index, id) in unnamed { media.streams[index].language = found[id] }
        }
        return media
    }

    /// Whether `uri` names an HLS playlist (`.m3u8`, a query or fragment after it allowed).
    static func isPlaylist(_ uri: String) -> Bool {
        let path = uri.split(whereSeparator: { $0 == "?" || $0 == "#" }).first.map(String.init) ?? uri
        return path.lowercased().hasSuffix(".m3u8")
    }

    private static func codecDescription(_ caps: UnsafeMutablePointer<GstCaps>) -> String {
        guard let text = gst_pb_utils_get_codec_description(caps) else { return "unknown" }
        defer { g_free(text) }
        return String(cString: text)
    }

    private static func isA(_ raw: OpaquePointer, _ type: GType) -> Bool {
        g_type_check_instance_is_a(UnsafeMutablePointer<GTypeInstance>(raw), type) != 0
    }

    private static func stream(_ raw: OpaquePointer) -> Stream {
        var s = Stream(kind: .other, codec: "unknown", caps: "")
        if let caps = gst_discoverer_stream_info_get_caps(raw) {
            s.codec = codecDescription(caps)
            if let text = gst_caps_to_string(caps) { s.caps = String(cString: text); g_free(text) }
            gst_caps_unref(caps)
        }
        if isA(raw, gst_discoverer_video_info_get_type()) {
            let v = raw
            s.kind = .video
            s.width = Int(gst_discoverer_video_info_get_width(v))
            s.height = Int(gst_discoverer_video_info_get_height(v))
            let d = gst_discoverer_video_info_get_framerate_denom(v)
            if d != 0 { s.frameRate = Double(gst_discoverer_video_info_get_framerate_num(v)) / Double(d) }
            let br = gst_discoverer_video_info_get_bitrate(v)
            s.bitrate = br > 0 ? Int(br) : nil
        } else if isA(raw, gst_discoverer_audio_info_get_type()) {
            let a = raw
            s.kind = .audio
            s.channels = Int(gst_discoverer_audio_info_get_channels(a))
            s.sampleRate = Int(gst_discoverer_audio_info_get_sample_rate(a))
            let br = gst_discoverer_audio_info_get_bitrate(a)
            s.bitrate = br > 0 ? Int(br) : nil
            s.language = gst_discoverer_audio_info_get_language(a).map { String(cString: $0) }
        } else if isA(raw, gst_discoverer_subtitle_info_get_type()) {
            s.kind = .subtitle
            s.language = gst_discoverer_subtitle_info_get_language(raw).map { String(cString: $0) }
        }
        return s
    }
}
