/// What the PulseAudio server describes and answers, as plain Swift values (no libpulse types above the client).

/// A PulseAudio sink as the server describes it.
public struct PulseSink: Sendable, Equatable {
    public var index: UInt32
    public var name: String
    public var description: String
    /// The sink's property list (`device.description`, `multiview.non-mixable`, `raop.*`, …).
    public var properties: [String: String]
    /// The module source file that implements it (`module-null-sink.c`, `raop-sink.c`, …).
    public var driver: String
    public var monitorSource: String
    public var ownerModule: UInt32?

    public init(index: UInt32, name: String, description: String, properties: [String: String] = [:],
                driver: String = "", monitorSource: String = "", ownerModule: UInt32? = nil) {
        self.index = index; self.name = name; self.description = description; self.properties = properties
        self.driver = driver; self.monitorSource = monitorSource; self.ownerModule = ownerModule
    }
}

/// A playback stream (sink input) as the server describes it.
public struct PulseSinkInput: Sendable, Equatable {
    public var index: UInt32
    public var name: String
    /// Index of the sink it plays to.
    public var sink: UInt32
    public var properties: [String: String]
    public var muted: Bool
    public var corked: Bool
    /// Average channel volume, linear (1.0 = 100 %).
    public var volume: Double

    public init(index: UInt32, name: String = "", sink: UInt32, properties: [String: String] = [:], muted: Bool = false,
                corked: Bool = false, volume: Double = 1) {
        self.index = index; self.name = name; self.sink = sink; self.properties = properties; self.muted = muted
        self.corked = corked; self.volume = volume
    }
}

/// What a subscription reports (PulseAudio's own event facilities, typed).
public enum PulseEvent: Sendable, Equatable {
    case sinkAdded(UInt32), sinkRemoved(UInt32), sinkChanged(UInt32)
    case sinkInputAdded(UInt32), sinkInputRemoved(UInt32), sinkInputChanged(UInt32)
    /// Default sink or server settings changed.
    case serverChanged
    /// The connection to the server was lost (server stopped or restarted).
    case disconnected
}

/// A libpulse error code (`pa_error_code_t`), mapped once from the context's errno by the client.
public enum PulseErrorCode: Sendable, Equatable, CustomStringConvertible {
    case accessDenied
    case invalidArgument
    case alreadyExists
    /// The sink, stream or module named does not exist (a stream that ended, a sink that was unloaded).
    case noSuchEntity
    case connectionRefused
    case protocolError
    case timeout
    case noAuthenticationKey
    case connectionTerminated
    case killed
    case invalidServer
    case moduleInitFailed
    case badState
    case notSupported
    case io
    case busy
    /// Any other code (the raw `pa_error_code_t` value).
    case other(Int32)

    public var description: String {
        switch self {
        case .accessDenied: return "access denied"
        case .invalidArgument: return "invalid argument"
        case .alreadyExists: return "entity exists"
        case .noSuchEntity: return "no such entity"
        case .connectionRefused: return "connection refused"
        case .protocolError: return "protocol error"
        case .timeout: return "timeout"
        case .noAuthenticationKey: return "no authentication key"
        case .connectionTerminated: return "connection terminated"
        case .killed: return "entity killed"
        case .invalidServer: return "invalid server"
        case .moduleInitFailed: return "module initialization failed"
        case .badState: return "bad state"
        case .notSupported: return "operation not supported"
        case .io: return "input/output error"
        case .busy: return "device or resource busy"
        case .other(let code): return "PulseAudio error \(code)"
        }
    }
}

/// The request a PulseAudio failure belongs to.
public enum PulseOperation: Sendable, Equatable, CustomStringConvertible {
    case serverInfo
    case listSinks
    case listSinkInputs
    case move(sinkInput: UInt32, sink: String)
    case mute(sinkInput: UInt32, muted: Bool)
    case setVolume(sinkInput: UInt32)
    case loadModule(name: String, arguments: String)
    case unloadModule(UInt32)

    public var description: String {
        switch self {
        case .serverInfo: return "get the server info"
        case .listSinks: return "list sinks"
        case .listSinkInputs: return "list streams"
        case .move(let input, let sink): return "move stream \(input) to \(sink)"
        case .mute(let input, let muted): return "\(muted ? "mute" : "unmute") stream \(input)"
        case .setVolume(let input): return "set the volume of stream \(input)"
        case .loadModule(let name, let arguments): return "load \(name) \(arguments)"
        case .unloadModule(let index): return "unload module \(index)"
        }
    }
}

public enum PulseAudioError: Error, Equatable, CustomStringConvertible {
    /// No server answered (not running, wrong PULSE_SERVER, no permission).
    case unreachable(PulseErrorCode)
    /// The connection is gone (the server stopped or restarted).
    case disconnected
    /// The server refused a request.
    case failed(PulseOperation, PulseErrorCode)

    public var description: String {
        switch self {
        case .unreachable(let code): return "PulseAudio is not reachable: \(code)"
        case .disconnected: return "the connection to PulseAudio was lost"
        case .failed(let operation, let code): return "PulseAudio refused to \(operation): \(code)"
        }
    }

    /// The request failed because what it named is gone (a stream that ended, a sink that was unloaded).
    public var isNoSuchEntity: Bool {
        if case .failed(_, .noSuchEntity) = self { return true }
        return false
    }
}
