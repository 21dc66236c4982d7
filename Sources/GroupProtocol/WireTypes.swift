/// Values carried inside `GroupMessage`s, in wire form: times in nanoseconds on the host's clock (the net clock
/// every member's pipelines follow), identifiers as text. Pure values; `GroupSession` converts them to and from
/// the coordination layer's types.

/// The protocol version this build speaks. A message with another `v` is refused (`ProtocolViolation.unsupportedVersion`).
public let groupProtocolVersion = 1

/// One item's group state: media time `anchorMediaNs` is rendered at host clock time `anchorClockNs`.
public struct WireGroupState: Codable, Sendable, Equatable {
    public var item: String
    public var rate: Double
    public var playing: Bool
    public var anchorMediaNs: UInt64
    /// nil while paused.
    public var anchorClockNs: UInt64?
    public init(item: String, rate: Double, playing: Bool, anchorMediaNs: UInt64, anchorClockNs: UInt64?) {
        self.item = item
        self.rate = rate
        self.playing = playing
        self.anchorMediaNs = anchorMediaNs
        self.anchorClockNs = anchorClockNs
    }
}

/// A transport command a member's view proposes to its group.
public enum WireIntent: Codable, Sendable, Equatable {
    case play(rate: Double)
    case pause
    case seek(toNs: UInt64)
    case seekBy(seconds: Double)
    case rate(Double)
    case playImmediately(rate: Double)
}

/// One participant as the group sees it (its id is the host's: `member.view`).
public struct WireParticipant: Codable, Sendable, Equatable {
    public var id: String
    public var item: String?
    public var ready: Bool
    public var suspensions: [String]
    public init(id: String, item: String?, ready: Bool, suspensions: [String]) {
        self.id = id
        self.item = item
        self.ready = ready
        self.suspensions = suspensions
    }
}

/// What the group did, for one of a member's views; the originator is a host participant id.
public enum WireEvent: Codable, Sendable, Equatable {
    case rateChanged(rate: Double, originator: String?)
    case timeJumped(toNs: UInt64, originator: String?)
    case joined(WireGroupState)
}

/// Where the host's network clock (GstNetTimeProvider) listens; members follow it with a GstNetClientClock.
public struct WireClockAddress: Codable, Sendable, Equatable {
    public var host: String
    public var port: Int
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// A medium the host plays, offered to members that join with `--views N,…` instead of their own files.
public struct WireViewMedia: Codable, Sendable, Equatable {
    public var view: Int
    public var uri: String
    public init(view: Int, uri: String) {
        self.view = view
        self.uri = uri
    }
}

/// How a request (prepare/start/pause/command/rejoin/join) ended.
public enum WireOutcome: Codable, Sendable, Equatable {
    case ok
    /// "Start at C" arrived after C: the view did not start (it would render late) and must be caught up.
    case missedStart
    /// The view or the group could not carry it out; the text says why (one line).
    case failed(String)
}

/// Why a message was refused, as the refusing side tells the other (`GroupMessage.error`).
public enum WireErrorCode: String, Codable, Sendable, Equatable {
    case oversized, malformed, unsupportedVersion, unknownType, badToken, notJoined, alreadyJoined, unknownItem
    case unknownParticipant, invalidField, rateLimited, wrongDirection, duplicateParticipant, unknownRequest
}
