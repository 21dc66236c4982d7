import Foundation

/// Who may send a message: the direction is checked on receipt.
public enum GroupRole: Sendable, Equatable {
    case host, member
}

extension GroupMessage {
    /// The `type` field of the envelope.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case hello, join, command, suspensions, rejoin, leave
        case welcome, prepare, start, pause, event, participants, end
        case reply, error, ping, pong

        /// Who sends this kind (nil: both).
        public var sender: GroupRole? {
            switch self {
            case .hello, .join, .command, .suspensions, .rejoin, .leave: return .member
            case .welcome, .prepare, .start, .pause, .event, .participants, .end: return .host
            case .reply, .error, .ping, .pong: return nil
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .hello: return .hello
        case .join: return .join
        case .command: return .command
        case .suspensions: return .suspensions
        case .rejoin: return .rejoin
        case .leave: return .leave
        case .welcome: return .welcome
        case .prepare: return .prepare
        case .start: return .start
        case .pause: return .pause
        case .event: return .event
        case .participants: return .participants
        case .end: return .end
        case .reply: return .reply
        case .error: return .error
        case .ping: return .ping
        case .pong: return .pong
        }
    }
}

/// The envelope: `{"v": version, "type": kind, "body": payload}`.
struct GroupEnvelopeHeader: Decodable {
    var v: Int
    var type: String
}

extension GroupMessage: Codable {
    enum Keys: String, CodingKey { case v, type, body }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let kind = try container.decode(Kind.self, forKey: .type)
        switch kind {
        case .hello: self = .hello(try container.decode(Hello.self, forKey: .body))
        case .join: self = .join(try container.decode(Join.self, forKey: .body))
        case .command: self = .command(try container.decode(Command.self, forKey: .body))
        case .suspensions: self = .suspensions(try container.decode(Suspensions.self, forKey: .body))
        case .rejoin: self = .rejoin(try container.decode(Rejoin.self, forKey: .body))
        case .leave: self = .leave(try container.decode(Leave.self, forKey: .body))
        case .welcome: self = .welcome(try container.decode(Welcome.self, forKey: .body))
        case .prepare: self = .prepare(try container.decode(Prepare.self, forKey: .body))
        case .start: self = .start(try container.decode(Start.self, forKey: .body))
        case .pause: self = .pause(try container.decode(Pause.self, forKey: .body))
        case .event: self = .event(try container.decode(Event.self, forKey: .body))
        case .participants: self = .participants(try container.decode([WireParticipant].self, forKey: .body))
        case .end: self = .end(try container.decode(End.self, forKey: .body))
        case .reply: self = .reply(try container.decode(Reply.self, forKey: .body))
        case .error: self = .error(try container.decode(ErrorMessage.self, forKey: .body))
        case .ping: self = .ping(try container.decode(Ping.self, forKey: .body))
        case .pong: self = .pong(try container.decode(Ping.self, forKey: .body))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(groupProtocolVersion, forKey: .v)
        try container.encode(kind, forKey: .type)
        switch self {
        case .hello(let body): try container.encode(body, forKey: .body)
        case .join(let body): try container.encode(body, forKey: .body)
        case .command(let body): try container.encode(body, forKey: .body)
        case .suspensions(let body): try container.encode(body, forKey: .body)
        case .rejoin(let body): try container.encode(body, forKey: .body)
        case .leave(let body): try container.encode(body, forKey: .body)
        case .welcome(let body): try container.encode(body, forKey: .body)
        case .prepare(let body): try container.encode(body, forKey: .body)
        case .start(let body): try container.encode(body, forKey: .body)
        case .pause(let body): try container.encode(body, forKey: .body)
        case .event(let body): try container.encode(body, forKey: .body)
        case .participants(let body): try container.encode(body, forKey: .body)
        case .end(let body): try container.encode(body, forKey: .body)
        case .reply(let body): try container.encode(body, forKey: .body)
        case .error(let body): try container.encode(body, forKey: .body)
        case .ping(let body): try container.encode(body, forKey: .body)
        case .pong(let body): try container.encode(body, forKey: .body)
        }
    }
}
