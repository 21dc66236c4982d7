/// Why a received frame was refused. Each is logged as one line and answered with `GroupMessage.error`; only
/// `badToken` (and a frame before `hello`) ends the connection, the session goes on for everyone else.
public enum ProtocolViolation: Error, Sendable, Equatable, CustomStringConvertible {
    case oversized(bytes: Int, limit: Int)
    case malformed(String)
    case unsupportedVersion(Int)
    case unknownType(String)
    case badToken
    /// A message other than `hello` came first.
    case notJoined(GroupMessage.Kind)
    case alreadyJoined
    case unknownItem(String)
    case unknownParticipant(String)
    case duplicateParticipant(String)
    case invalidField(String)
    case rateLimited(participant: String)
    case wrongDirection(GroupMessage.Kind)
    case unknownRequest(Int)
    case binaryFrame(bytes: Int)

    public var code: WireErrorCode {
        switch self {
        case .oversized: return .oversized
        case .malformed, .binaryFrame: return .malformed
        case .unsupportedVersion: return .unsupportedVersion
        case .unknownType: return .unknownType
        case .badToken: return .badToken
        case .notJoined: return .notJoined
        case .alreadyJoined: return .alreadyJoined
        case .unknownItem: return .unknownItem
        case .unknownParticipant: return .unknownParticipant
        case .duplicateParticipant: return .duplicateParticipant
        case .invalidField: return .invalidField
        case .rateLimited: return .rateLimited
        case .wrongDirection: return .wrongDirection
        case .unknownRequest: return .unknownRequest
        }
    }

    /// The connection cannot go on (no session without a valid token).
    public var closesConnection: Bool {
        switch self {
        case .badToken, .notJoined: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .oversized(let bytes, let limit): return "oversized message: \(bytes) bytes (limit \(limit))"
        case .malformed(let why): return "malformed message: \(why)"
        case .unsupportedVersion(let v): return "unsupported protocol version \(v) (this side speaks \(groupProtocolVersion))"
        case .unknownType(let type): return "unknown message type \"\(type)\""
        case .badToken: return "wrong or missing session token"
        case .notJoined(let kind): return "\(kind.rawValue) before hello"
        case .alreadyJoined: return "hello sent twice"
        case .unknownItem(let item): return "unknown item \"\(item)\" (not played by this session)"
        case .unknownParticipant(let id): return "unknown participant \"\(id)\""
        case .duplicateParticipant(let id): return "participant \"\(id)\" has joined already"
        case .invalidField(let why): return "invalid field: \(why)"
        case .rateLimited(let id): return "too many commands from \(id): dropped"
        case .wrongDirection(let kind): return "\(kind.rawValue) is not sent in this direction"
        case .unknownRequest(let request): return "reply to unknown request \(request)"
        case .binaryFrame(let bytes): return "binary frame of \(bytes) bytes (messages are text)"
        }
    }
}
