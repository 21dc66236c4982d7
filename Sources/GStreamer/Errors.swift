import CGStreamer

/// Errors raised by the wrapper layer itself (not errors posted on a bus: those are `BusMessage.ErrorInfo`).
public enum GStreamerError: Error, Sendable, Equatable, CustomStringConvertible {
    case initializationFailed
    /// No element factory of that name: the plugin is not installed.
    case missingElement(factory: String)
    case noSuchProperty(element: String, property: String)
    case noSuchSignal(element: String, signal: String)
    /// The property exists but holds another type than the one asked for.
    case propertyTypeMismatch(element: String, property: String, expected: String, actual: String)
    case propertyNotWritable(element: String, property: String)
    case invalidPropertyValue(element: String, property: String, value: String)
    case parse(description: String, message: String)
    case linkFailed(from: String, to: String)
    case stateChangeFailed(element: String, target: ElementState)
    case invalidCaps(String)
    case noSuchPad(element: String, pad: String)
    case queryFailed(String)
    case seekFailed(element: String)
    case notAPipeline(String)
    /// The element is not an audio sink built on GstAudioBaseSink (needed for custom clock slaving).
    case notAnAudioSink(String)

    public var description: String {
        switch self {
        case .initializationFailed: return "GStreamer could not be initialised"
        case .missingElement(let f): return "GStreamer element '\(f)' is not installed (missing plugin)"
        case .noSuchProperty(let e, let p): return "element '\(e)' has no property '\(p)'"
        case .noSuchSignal(let e, let s): return "'\(e)' has no signal '\(s)'"
        case .propertyTypeMismatch(let e, let p, let exp, let act):
            return "property '\(p)' of '\(e)' is \(act), not \(exp)"
        case .propertyNotWritable(let e, let p): return "property '\(p)' of '\(e)' is not writable"
        case .invalidPropertyValue(let e, let p, let v): return "'\(v)' is not a valid value for '\(p)' of '\(e)'"
        case .parse(let d, let m): return "cannot build '\(d)': \(m)"
        case .linkFailed(let a, let b): return "cannot link '\(a)' to '\(b)'"
        case .stateChangeFailed(let e, let s): return "'\(e)' failed to change state to \(s)"
        case .invalidCaps(let c): return "invalid caps '\(c)'"
        case .noSuchPad(let e, let p): return "element '\(e)' has no pad '\(p)'"
        case .queryFailed(let q): return "query failed: \(q)"
        case .seekFailed(let e): return "seek failed on '\(e)'"
        case .notAPipeline(let e): return "'\(e)' is not a pipeline"
        case .notAnAudioSink(let e): return "'\(e)' is not an audio sink (GstAudioBaseSink)"
        }
    }
}

/// A GLib error value (domain, code, message) copied out of a `GError`.
public struct GLibError: Error, Sendable, Equatable, CustomStringConvertible {
    public var domain: String
    public var code: Int
    public var message: String

    init(_ error: UnsafeMutablePointer<GError>) {
        domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? "unknown"
        code = Int(error.pointee.code)
        message = error.pointee.message.map { String(cString: $0) } ?? ""
    }
    public init(domain: String, code: Int, message: String) {
        self.domain = domain; self.code = code; self.message = message
    }
    public var description: String { message }
}

/// A GStreamer error's GError domain and code (gsterror.h), mapped once here so the layers above match typed
/// cases instead of numbers. Codes GStreamer adds later arrive as `.other` with the raw values.
public enum GStreamerErrorCode: Sendable, Equatable {
    public enum Core: Sendable, Equatable { case missingPlugin, stateChange, negotiation, clock, other(Int) }
    public enum Resource: Sendable, Equatable {
        case notFound, openRead, read, notAuthorized, busy, settings, other(Int)
    }
    public enum Stream: Sendable, Equatable {
        /// GST_STREAM_ERROR_FAILED: what a demuxer posts when none of its pads is linked (no decoder for anything).
        case failed
        case typeNotFound, wrongType, codecNotFound, decode, demux, format, other(Int)
    }
    case core(Core)
    case library(Int)
    case resource(Resource)
    case stream(Stream)
    /// Any other domain (an element's own), by name.
    case other(domain: String, code: Int)

    public init(domain: String, code: Int) {
        func matches(_ value: some BinaryInteger) -> Bool { code == Int(value) }
        switch domain {
        case "gst-core-error-quark":
            if matches(GST_CORE_ERROR_MISSING_PLUGIN.rawValue) { self = .core(.missingPlugin) }
            else if matches(GST_CORE_ERROR_STATE_CHANGE.rawValue) { self = .core(.stateChange) }
            else if matches(GST_CORE_ERROR_NEGOTIATION.rawValue) { self = .core(.negotiation) }
            else if matches(GST_CORE_ERROR_CLOCK.rawValue) { self = .core(.clock) }
            else { self = .core(.other(code)) }
        case "gst-library-error-quark":
            self = .library(code)
        case "gst-resource-error-quark":
            if matches(GST_RESOURCE_ERROR_NOT_FOUND.rawValue) { self = .resource(.notFound) }
            else if matches(GST_RESOURCE_ERROR_OPEN_READ.rawValue) { self = .resource(.openRead) }
            else if matches(GST_RESOURCE_ERROR_READ.rawValue) { self = .resource(.read) }
            else if matches(GST_RESOURCE_ERROR_NOT_AUTHORIZED.rawValue) { self = .resource(.notAuthorized) }
            else if matches(GST_RESOURCE_ERROR_BUSY.rawValue) { self = .resource(.busy) }
            else if matches(GST_RESOURCE_ERROR_SETTINGS.rawValue) { self = .resource(.settings) }
            else { self = .resource(.other(code)) }
        case "gst-stream-error-quark":
            if matches(GST_STREAM_ERROR_FAILED.rawValue) { self = .stream(.failed) }
            else if matches(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue) { self = .stream(.typeNotFound) }
            else if matches(GST_STREAM_ERROR_WRONG_TYPE.rawValue) { self = .stream(.wrongType) }
            else if matches(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue) { self = .stream(.codecNotFound) }
            else if matches(GST_STREAM_ERROR_DECODE.rawValue) { self = .stream(.decode) }
            else if matches(GST_STREAM_ERROR_DEMUX.rawValue) { self = .stream(.demux) }
            else if matches(GST_STREAM_ERROR_FORMAT.rawValue) { self = .stream(.format) }
            else { self = .stream(.other(code)) }
        default:
            self = .other(domain: domain, code: code)
        }
    }
}
