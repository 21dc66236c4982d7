/// Every message of a group session's control channel (one WebSocket text frame each, JSON:
/// `{"v":1,"type":"hello","body":{…}}`). The direction is part of each case's contract; a message sent the wrong
/// way is refused (`ProtocolViolation.wrongDirection`). Requests carry a `request` number the answer (`reply`)
/// repeats. Participant ids in messages are the *host's* ids (`member.view`, e.g. `m1.view2`).
public enum GroupMessage: Sendable, Equatable {
    // member → host
    /// First message of a member: the session token, a name for logs and what it can do.
    case hello(Hello)
    /// One of the member's views joins the group of `item`.
    case join(Join)
    /// A transport command from one of the member's views, for its group.
    case command(Command)
    /// The view's suspension reasons changed (a stall, an interruption, scrubbing…).
    case suspensions(Suspensions)
    /// The view (re)joins its group's timeline: late join, the end of a suspension.
    case rejoin(Rejoin)
    /// One view leaves (`participant`), or the whole member (nil).
    case leave(Leave)

    // host → member
    /// The answer to `hello`: the member's id, the clock to follow, the start margin, the groups, the participants.
    case welcome(Welcome)
    /// Seek and preroll a view at `itemTimeNs` and `rate`, then answer `reply(ok)`: "readiness (prepared)".
    case prepare(Prepare)
    /// Render the prepared `itemTimeNs` at host clock time `atClockNs` ("start at C").
    case start(Start)
    /// Stop a view at `itemTimeNs`.
    case pause(Pause)
    /// What the group did, for one view (rate changed, time jumped with the originator, joined).
    case event(Event)
    /// Every participant of the session (after each change).
    case participants([WireParticipant])
    /// The host ended the session (`end`), for everyone.
    case end(End)

    // both ways
    case reply(Reply)
    /// A refused message: the code and one line of detail. The connection stays up unless the code is `badToken`.
    case error(ErrorMessage)
    /// Heartbeat; the answer (`pong`) echoes `sentNs` so the sender measures the round trip.
    case ping(Ping)
    case pong(Ping)

    /// The request number a message carries (requests and their replies), nil for the others.
    public var request: Int? {
        switch self {
        case .join(let m): return m.request
        case .command(let m): return m.request
        case .rejoin(let m): return m.request
        case .prepare(let m): return m.request
        case .start(let m): return m.request
        case .pause(let m): return m.request
        case .reply(let m): return m.request
        default: return nil
        }
    }

    public struct Hello: Codable, Sendable, Equatable {
        public var token: String
        public var member: String
        public var capabilities: [String]
        public init(token: String, member: String, capabilities: [String]) {
            self.token = token
            self.member = member
            self.capabilities = capabilities
        }
    }
    public struct Welcome: Codable, Sendable, Equatable {
        /// The member's id on the host: its views are `memberID.viewN`.
        public var memberID: String
        /// The host's net clock; nil: the host's system clock, shared because host and member are one machine.
        public var clock: WireClockAddress?
        public var startMarginMs: Double
        public var groups: [WireGroupState]
        public var participants: [WireParticipant]
        /// The item every view of the host plays (members' views must join with it).
        public var items: [String]
        public var media: [WireViewMedia]
        public var heartbeatMs: Int
        public init(memberID: String, clock: WireClockAddress?, startMarginMs: Double, groups: [WireGroupState],
                    participants: [WireParticipant], items: [String], media: [WireViewMedia], heartbeatMs: Int) {
            self.memberID = memberID
            self.clock = clock
            self.startMarginMs = startMarginMs
            self.groups = groups
            self.participants = participants
            self.items = items
            self.media = media
            self.heartbeatMs = heartbeatMs
        }
    }
    public struct Join: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public var item: String
        public init(request: Int, participant: String, item: String) {
            self.request = request
            self.participant = participant
            self.item = item
        }
    }
    public struct Command: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public var item: String
        public var intent: WireIntent
        public init(request: Int, participant: String, item: String, intent: WireIntent) {
            self.request = request
            self.participant = participant
            self.item = item
            self.intent = intent
        }
    }
    public struct Suspensions: Codable, Sendable, Equatable {
        public var participant: String
        public var reasons: [String]
        public init(participant: String, reasons: [String]) {
            self.participant = participant
            self.reasons = reasons
        }
    }
    public struct Rejoin: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public init(request: Int, participant: String) {
            self.request = request
            self.participant = participant
        }
    }
    public struct Leave: Codable, Sendable, Equatable {
        public var participant: String?
        public init(participant: String?) { self.participant = participant }
    }
    public struct Prepare: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public var item: String
        public var itemTimeNs: UInt64
        public var rate: Double
        public var originator: String?
        public init(request: Int, participant: String, item: String, itemTimeNs: UInt64, rate: Double, originator: String?) {
            self.request = request
            self.participant = participant
            self.item = item
            self.itemTimeNs = itemTimeNs
            self.rate = rate
            self.originator = originator
        }
    }
    public struct Start: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public var item: String
        public var itemTimeNs: UInt64
        public var rate: Double
        public var atClockNs: UInt64
        public var originator: String?
        public init(request: Int, participant: String, item: String, itemTimeNs: UInt64, rate: Double,
                    atClockNs: UInt64, originator: String?) {
            self.request = request
            self.participant = participant
            self.item = item
            self.itemTimeNs = itemTimeNs
            self.rate = rate
            self.atClockNs = atClockNs
            self.originator = originator
        }
    }
    public struct Pause: Codable, Sendable, Equatable {
        public var request: Int
        public var participant: String
        public var item: String
        public var itemTimeNs: UInt64
        public var originator: String?
        public init(request: Int, participant: String, item: String, itemTimeNs: UInt64, originator: String?) {
            self.request = request
            self.participant = participant
            self.item = item
            self.itemTimeNs = itemTimeNs
            self.originator = originator
        }
    }
    public struct Event: Codable, Sendable, Equatable {
        public var participant: String
        public var event: WireEvent
        public init(participant: String, event: WireEvent) {
            self.participant = participant
            self.event = event
        }
    }
    public struct End: Codable, Sendable, Equatable {
        public var reason: String
        public init(reason: String) { self.reason = reason }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var request: Int
        public var outcome: WireOutcome
        /// For a `prepare` that went well: how long the view took to seek and preroll, measured by the member
        /// (without the network). The host places a predicted start instant from it (`StartPrediction`). Optional:
        /// absent in every other reply, and from members that do not measure it.
        public var preparedNs: UInt64?
        public init(request: Int, outcome: WireOutcome, preparedNs: UInt64? = nil) {
            self.request = request
            self.outcome = outcome
            self.preparedNs = preparedNs
        }
    }
    public struct ErrorMessage: Codable, Sendable, Equatable {
        public var code: WireErrorCode
        public var detail: String
        /// The refused message's request number, when it had one (its sender stops waiting for an answer).
        public var request: Int?
        public init(code: WireErrorCode, detail: String, request: Int? = nil) {
            self.code = code
            self.detail = detail
            self.request = request
        }
    }
    public struct Ping: Codable, Sendable, Equatable {
        public var sequence: Int
        /// When it was sent, on the sender's clock (the host: the group's clock).
        public var sentNs: UInt64
        /// In a member's `pong`: when the ping arrived, on the member's clock, which follows the host's — so
        /// `receivedNs − sentNs` is how long the host's messages take to reach the member, one way (a predicted
        /// start's delivery, `StartPrediction`). Optional: absent in pings and from members that do not say it.
        public var receivedNs: UInt64?
        public init(sequence: Int, sentNs: UInt64, receivedNs: UInt64? = nil) {
            self.sequence = sequence
            self.sentNs = sentNs
            self.receivedNs = receivedNs
        }
    }
}
