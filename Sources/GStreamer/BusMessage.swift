import CGStreamer

/// A bus message, copied into Swift values at the moment it is posted (on the posting thread), so it can be
/// handed to any other thread. Unknown message types arrive as `.other` rather than being dropped.
public enum BusMessage: Sendable {
    /// Which object posted the message.
    public struct Source: Sendable, Equatable, CustomStringConvertible {
        public var name: String
        /// "/GstPlayBin3:playbin/GstURIDecodeBin3:uridecodebin3-0/…"
        public var path: String
        /// Posted by the pipeline itself (not one of its children).
        public var isPipeline: Bool
        public var factory: String?
        public var description: String { name }

        public init(name: String, path: String, isPipeline: Bool, factory: String?) {
            self.name = name; self.path = path; self.isPipeline = isPipeline; self.factory = factory
        }
    }

    /// An error or warning: the GError's domain, code and message, the debug text, and the source.
    public struct ErrorInfo: Error, Sendable, Equatable, CustomStringConvertible {
        public var domain: String
        public var code: Int
        public var message: String
        public var debug: String?
        public var source: Source
        public var description: String { "\(message) (\(domain) \(code), from \(source.name))" }

        /// `GST_RESOURCE_ERROR`, `GST_STREAM_ERROR`, `GST_CORE_ERROR`, `GST_LIBRARY_ERROR` domains by name.
        public var isResourceError: Bool { domain == "gst-resource-error-quark" }
        public var isStreamError: Bool { domain == "gst-stream-error-quark" }
        public var isCoreError: Bool { domain == "gst-core-error-quark" }
        /// The domain and code as a typed value (mapped in `GStreamerErrorCode`).
        public var kind: GStreamerErrorCode { GStreamerErrorCode(domain: domain, code: code) }

        public init(domain: String, code: Int, message: String, debug: String? = nil, source: Source) {
            self.domain = domain; self.code = code; self.message = message; self.debug = debug; self.source = source
        }
    }

    /// One stream of a stream collection (playbin3 / decodebin3).
    public struct StreamInfo: Sendable, Equatable {
        public enum Kind: String, Sendable { case audio, video, text, container, unknown }
        public var id: String
        public var kind: Kind
        public var caps: String?
        public var language: String?
        public var codec: String?

        public init(id: String, kind: Kind, caps: String?, language: String?, codec: String?) {
            self.id = id; self.kind = kind; self.caps = caps; self.language = language; self.codec = codec
        }
    }

    case error(ErrorInfo)
    case warning(ErrorInfo)
    case eos(Source)
    case stateChanged(Source, old: ElementState, new: ElementState, pending: ElementState)
    case asyncDone(Source, runningTime: ClockTime?)
    case buffering(Source, percent: Int)
    case clockLost(Source)
    case newClock(Source)
    case latency(Source)
    /// An element asks the application to change the pipeline state (pulsesink does on cork/uncork).
    case requestState(Source, ElementState)
    case streamStart(Source)
    /// The streams as they were when the message was posted, and the collection itself: a stream's tags (its
    /// language) can arrive after the message (parsebin stores a tag event on the stream when it passes), so
    /// `live.streams` reads them again.
    case streamCollection(Source, [StreamInfo], live: StreamCollection?)
    case streamsSelected(Source, [StreamInfo])
    case durationChanged(Source)
    /// A plugin needed to decode a stream is not installed (`gst_is_missing_plugin_message`). `mediaType` is the
    /// media type it was needed for ("video/x-h265": the name of the message's `detail` caps), when it has one.
    case missingPlugin(Source, description: String, mediaType: String?)
    case element(Source, Structure)
    case application(Source, Structure)
    case other(Source, type: String)

    public var source: Source {
        switch self {
        case .error(let e), .warning(let e): return e.source
        case .eos(let s), .stateChanged(let s, _, _, _), .asyncDone(let s, _), .buffering(let s, _),
             .clockLost(let s), .newClock(let s), .latency(let s), .requestState(let s, _), .streamStart(let s),
             .streamCollection(let s, _, _), .streamsSelected(let s, _), .durationChanged(let s),
             .missingPlugin(let s, _, _), .element(let s, _), .application(let s, _), .other(let s, _):
            return s
        }
    }
}

extension BusMessage {
    /// Copies a C message into a Swift value. `pipeline` identifies the top-level element (identity only).
    init(_ message: UnsafeMutablePointer<GstMessage>, pipeline: UnsafeMutableRawPointer?) {
        let source = BusMessage.makeSource(message.pointee.src, pipeline: pipeline)
        switch message.pointee.type {
        case GST_MESSAGE_ERROR, GST_MESSAGE_WARNING:
            var error: UnsafeMutablePointer<GError>?
            var debug: UnsafeMutablePointer<gchar>?
            if message.pointee.type == GST_MESSAGE_ERROR {
                gst_message_parse_error(message, &error, &debug)
            } else {
                gst_message_parse_warning(message, &error, &debug)
            }
            let glib = error.map { GLibError($0) } ?? GLibError(domain: "unknown", code: 0, message: "unknown error")
            if let error { g_error_free(error) }
            let debugText = debug.map { String(cString: $0) }
            g_free(debug)
            let info = ErrorInfo(domain: glib.domain, code: glib.code, message: glib.message, debug: debugText,
                                 source: source)
            self = message.pointee.type == GST_MESSAGE_ERROR ? .error(info) : .warning(info)
        case GST_MESSAGE_EOS:
            self = .eos(source)
        case GST_MESSAGE_STATE_CHANGED:
            var old = GST_STATE_VOID_PENDING, new = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            gst_message_parse_state_changed(message, &old, &new, &pending)
            self = .stateChanged(source, old: ElementState(old), new: ElementState(new), pending: ElementState(pending))
        case GST_MESSAGE_ASYNC_DONE:
            var runningTime: GstClockTime = ClockTime.noneRawValue
            gst_message_parse_async_done(message, &runningTime)
            self = .asyncDone(source, runningTime: ClockTime(raw: runningTime))
        case GST_MESSAGE_BUFFERING:
            var percent: gint = 0
            gst_message_parse_buffering(message, &percent)
            self = .buffering(source, percent: Int(percent))
        case GST_MESSAGE_CLOCK_LOST:
            self = .clockLost(source)
        case GST_MESSAGE_NEW_CLOCK:
            self = .newClock(source)
        case GST_MESSAGE_LATENCY:
            self = .latency(source)
        case GST_MESSAGE_REQUEST_STATE:
            var state = GST_STATE_VOID_PENDING
            gst_message_parse_request_state(message, &state)
            self = .requestState(source, ElementState(state))
        case GST_MESSAGE_STREAM_START:
            self = .streamStart(source)
        case GST_MESSAGE_DURATION_CHANGED:
            self = .durationChanged(source)
        case GST_MESSAGE_STREAM_COLLECTION:
            var collection: UnsafeMutablePointer<GstStreamCollection>?
            gst_message_parse_stream_collection(message, &collection)
            // The parse returned a reference of our own: the wrapper takes it over.
            self = .streamCollection(source, BusMessage.streams(of: collection),
                                     live: collection.map { StreamCollection(takingOwnershipOf: UnsafeMutableRawPointer($0)) })
        case GST_MESSAGE_STREAMS_SELECTED:
            var streams: [StreamInfo] = []
            for i in 0..<gst_message_streams_selected_get_size(message) {
                if let stream = gst_message_streams_selected_get_stream(message, i) {
                    streams.append(BusMessage.streamInfo(stream))
                    gst_object_unref(stream)
                }
            }
            self = .streamsSelected(source, streams)
        case GST_MESSAGE_ELEMENT:
            if gst_is_missing_plugin_message(message) != 0 {
                let text = gst_missing_plugin_message_get_description(message)
                var mediaType: String?
                if let structure = gst_message_get_structure(message), let value = gst_structure_get_value(structure, "detail"),
                   g_type_check_value_holds(value, gst_caps_get_type()) != 0, let caps = gst_value_get_caps(value),
                   gst_caps_get_size(caps) > 0, let name = gst_structure_get_name(gst_caps_get_structure(caps, 0)) {
                    mediaType = String(cString: name)
                }
                self = .missingPlugin(source, description: text.map { String(cString: $0) } ?? "unknown plugin",
                                      mediaType: mediaType)
                g_free(text)
            } else if let structure = gst_message_get_structure(message) {
                self = .element(source, Structure(structure))
            } else {
                self = .other(source, type: "element")
            }
        case GST_MESSAGE_APPLICATION:
            if let structure = gst_message_get_structure(message) {
                self = .application(source, Structure(structure))
            } else {
                self = .other(source, type: "application")
            }
        default:
            let name = gst_message_type_get_name(message.pointee.type).map { String(cString: $0) } ?? "unknown"
            self = .other(source, type: name)
        }
    }

    static func makeSource(_ object: UnsafeMutablePointer<GstObject>?, pipeline: UnsafeMutableRawPointer?) -> Source {
        guard let object else { return Source(name: "", path: "", isPipeline: false, factory: nil) }
        let name = gstObjectName(object) ?? ""
        var path = name
        if let raw = gst_object_get_path_string(object) { path = String(cString: raw); g_free(raw) }
        let isElement = g_type_check_instance_is_a(UnsafeMutableRawPointer(object).assumingMemoryBound(to: GTypeInstance.self),
                                                   gst_element_get_type()) != 0
        let factory = isElement ? gstFactoryName(ofElement: object) : nil
        return Source(name: name, path: path, isPipeline: UnsafeMutableRawPointer(object) == pipeline, factory: factory)
    }

    static func streams(of collection: UnsafeMutablePointer<GstStreamCollection>?) -> [StreamInfo] {
        guard let collection else { return [] }
        var result: [StreamInfo] = []
        for i in 0..<gst_stream_collection_get_size(collection) {
            if let stream = gst_stream_collection_get_stream(collection, i) {
                result.append(streamInfo(stream))
            }
        }
        return result
    }

    static func streamInfo(_ stream: UnsafeMutablePointer<GstStream>) -> StreamInfo {
        let id = gst_stream_get_stream_id(stream).map { String(cString: $0) } ?? ""
        let type = gst_stream_get_stream_type(stream).rawValue
        let kind: StreamInfo.Kind
        if type & GST_STREAM_TYPE_VIDEO.rawValue != 0 { kind = .video }
        else if type & GST_STREAM_TYPE_AUDIO.rawValue != 0 { kind = .audio }
        else if type & GST_STREAM_TYPE_TEXT.rawValue != 0 { kind = .text }
        else if type & GST_STREAM_TYPE_CONTAINER.rawValue != 0 { kind = .container }
        else { kind = .unknown }
        var capsText: String?
        var codec: String?
        if let caps = gst_stream_get_caps(stream) {
            if let text = gst_caps_to_string(caps) { capsText = String(cString: text); g_free(text) }
            if let text = gst_pb_utils_get_codec_description(caps) { codec = String(cString: text); g_free(text) }
            gst_caps_unref(caps)
        }
        var language: String?
        if let tags = gst_stream_get_tags(stream) {
            var value: UnsafeMutablePointer<gchar>?
            if gst_tag_list_get_string(tags, "language-code", &value) != 0, let value {
                language = String(cString: value); g_free(value)
            }
            gst_tag_list_unref(tags)
        }
        return StreamInfo(id: id, kind: kind, caps: capsText, language: language, codec: codec)
    }
}

/// An owned `GstStreamCollection`, kept to read its streams' current tags later (see `BusMessage.streamCollection`).
/// Sendable: the collection's stream list is fixed once posted, and each stream's tags are read under the
/// stream's own object lock by `gst_stream_get_tags`.
public final class StreamCollection: ObjectRef, @unchecked Sendable {
    /// Every stream with the tags it carries now.
    public var streams: [BusMessage.StreamInfo] {
        BusMessage.streams(of: UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstStreamCollection.self))
    }
}
