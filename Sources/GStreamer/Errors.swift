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
