/// Checks every message a host receives from one member connection, after decoding: direction, hello first with
/// the right token, participants belonging to this member, items the session plays, sane numbers, and a rate
/// limit on commands. Pure: one value per connection, owned by that connection's handler; time is passed in.
public struct MemberMessageValidator: Sendable {
    public let token: String
    public let items: Set<String>
    /// Set by a valid hello: the member's id on the host (its views are `memberID.viewN`).
    public private(set) var memberID: String?
    public private(set) var participants: Set<String> = []
    private var limiter: CommandRateLimiter
    private let assignID: String

    /// `memberID` is what this connection's member will be called once its hello is accepted.
    public init(token: String, items: Set<String>, memberID: String, limiter: CommandRateLimiter = CommandRateLimiter()) {
        self.token = token
        self.items = items
        self.assignID = memberID
        self.limiter = limiter
    }

    public var isGreeted: Bool { memberID != nil }

    /// Accepts `message` (updating the joined participants) or says why not. `now`: seconds, monotonic.
    public mutating func validate(_ message: GroupMessage, now: Double) throws(ProtocolViolation) {
        if message.kind.sender == .host { throw .wrongDirection(message.kind) }
        guard let memberID else {
            guard case .hello(let hello) = message else { throw .notJoined(message.kind) }
            guard SessionToken.matches(hello.token, token) else { throw .badToken }
            try Self.checkName(hello.member, field: "member")
            self.memberID = assignID
            return
        }
        switch message {
        case .hello:
            throw .alreadyJoined
        case .join(let join):
            try Self.checkParticipant(join.participant, of: memberID)
            guard items.contains(join.item) else { throw .unknownItem(join.item) }
            guard !participants.contains(join.participant) else { throw .duplicateParticipant(join.participant) }
            participants.insert(join.participant)
        case .command(let command):
            try known(command.participant)
            guard items.contains(command.item) else { throw .unknownItem(command.item) }
            try Self.check(command.intent)
            guard limiter.allow(at: now) else { throw .rateLimited(participant: command.participant) }
        case .suspensions(let suspensions):
            try known(suspensions.participant)
            guard suspensions.reasons.count <= 16 else { throw .invalidField("more than 16 suspension reasons") }
            for reason in suspensions.reasons { try Self.checkName(reason, field: "suspension reason") }
        case .rejoin(let rejoin):
            try known(rejoin.participant)
        case .reply(let reply):
            // An hour is far beyond any preroll: a bigger figure is garbage, and would push every start away.
            if let prepared = reply.preparedNs, prepared > Self.longestPreparationNs {
                throw .invalidField("prepared in \(prepared) ns (more than an hour)")
            }
        case .leave(let leave):
            if let id = leave.participant {
                try known(id)
                participants.remove(id)
            } else {
                participants.removeAll()
            }
        default:
            break
        }
    }

    private func known(_ id: String) throws(ProtocolViolation) {
        guard participants.contains(id) else { throw .unknownParticipant(id) }
    }

    /// The longest preparation a reply may report (`Reply.preparedNs`): one hour.
    public static let longestPreparationNs: UInt64 = 3_600_000_000_000

    /// Rates as the stage allows them (1/8…8, sign for direction), finite seeks.
    public static func check(_ intent: WireIntent) throws(ProtocolViolation) {
        func rate(_ r: Double) throws(ProtocolViolation) {
            guard r.isFinite, abs(r) >= 0.125, abs(r) <= 8 else { throw .invalidField("rate \(r) outside ±1/8…8") }
        }
        switch intent {
        case .play(let r), .rate(let r), .playImmediately(let r): try rate(r)
        case .seekBy(let s):
            guard s.isFinite, abs(s) <= 86_400 else { throw .invalidField("seek by \(s) s") }
        case .pause, .seek: break
        }
    }

    /// A participant id on the host: `memberID.` + a local view id.
    static func checkParticipant(_ id: String, of memberID: String) throws(ProtocolViolation) {
        try checkName(id, field: "participant")
        guard id.hasPrefix(memberID + "."), id.count > memberID.count + 1 else {
            throw .invalidField("participant \"\(id)\" is not one of member \(memberID)'s views")
        }
    }

    /// Names are short and plain (they end up in logs and other members' lists).
    static func checkName(_ name: String, field: String) throws(ProtocolViolation) {
        guard !name.isEmpty, name.utf8.count <= 64,
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "._-".unicodeScalars.contains($0)) })
        else { throw .invalidField("\(field) \"\(name.prefix(64))\" (1…64 of A-Z a-z 0-9 . _ -)") }
    }
}

/// What a member accepts from its host: host-bound messages only, and `welcome` (or an error/end) first.
public struct HostMessageValidator: Sendable {
    public private(set) var welcomed = false
    public init() {}

    public mutating func validate(_ message: GroupMessage) throws(ProtocolViolation) {
        if message.kind.sender == .member { throw .wrongDirection(message.kind) }
        switch message {
        case .welcome:
            guard !welcomed else { throw .alreadyJoined }
            welcomed = true
        case .error, .end, .ping, .pong:
            break
        default:
            guard welcomed else { throw .notJoined(message.kind) }
        }
    }
}
