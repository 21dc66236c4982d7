import Coordination
import Foundation
import GStreamer
import GroupProtocol

/// What a member tells its user about the session (the CLI prints these).
public enum SessionNotice: Sendable, Equatable {
    /// The host ended the session for everyone.
    case ended(String)
    /// The host's connection closed or went silent: the views play on, on their last clock.
    case hostLost(String)
    /// A host came back at the same address and took this member in again (its new member id).
    case rejoined(String)
    case participants([String])
}

/// A member's link to its session host: the `GroupUplink` of its `NetworkCoordinationMedium` (requests go out as
/// messages and their replies come back) and the receiver of the host's commands for its views, which it hands
/// to the medium. Participant ids on the wire are the host's: `memberID.` + the local id.
///
/// Threading: an actor; it owns the connection's sending half, the requests in flight, the validator, the
/// welcome and the medium it feeds.
public actor SessionMember: GroupUplink {
    private var peer: WebSocketPeer?
    private var connection: Task<Void, Never>?
    private var validator = HostMessageValidator()
    private var requests = RequestTable()
    private var welcomeWaiter: CheckedContinuation<GroupMessage.Welcome, any Error>?
    /// How the handshake ended (welcome or refusal) when it ended before `greet` waited for it: the reply can
    /// arrive while `greet` is still suspended in sending the hello (on loopback, under load).
    private var handshakeOutcome: Result<GroupMessage.Welcome, any Error>?
    public private(set) var welcome: GroupMessage.Welcome?
    private weak var medium: NetworkCoordinationMedium?
    private let log: @Sendable (String) -> Void
    private let notices: AsyncStream<SessionNotice>.Continuation
    public nonisolated let noticeStream: AsyncStream<SessionNotice>
    private var lastHeard = ContinuousClock.now
    /// Each view's latest host command being carried out (the next one for that view waits for it).
    private var commandsInFlight: [String: Task<Void, Never>] = [:]
    private var lost = false
    public static let hostSilenceLimit: Duration = .seconds(3)

    private init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
        (noticeStream, notices) = AsyncStream<SessionNotice>.makeStream()
    }

    /// Connects, says hello with `token` and waits (at most 5 s) for the welcome. Throws `GroupLinkError.refused`
    /// with the host's reason (a wrong token: `badToken`).
    public static func connect(host: String, port: Int, token: String, name: String,
                               log: @escaping @Sendable (String) -> Void) async throws -> SessionMember {
        guard let channel = try await WebSocketTransport.connect(host: host, port: port) else {
            throw GroupLinkError.failed("\(host):\(port) is not a multiview session (WebSocket upgrade refused)")
        }
        let member = SessionMember(log: log)
        let (peers, peerContinuation) = AsyncStream<WebSocketPeer>.makeStream()
        let connection = Task {
            try? await channel.executeThenClose { inbound, outbound in
                let peer = WebSocketPeer(outbound: outbound, masks: true)
                peerContinuation.yield(peer)
                peerContinuation.finish()
                await WebSocketPeer.readFrames(inbound, peer: peer) { await member.receive($0) }
            }
            peerContinuation.finish()
            await member.connectionEnded("the connection closed")
        }
        var iterator = peers.makeAsyncIterator()
        guard let peer = await iterator.next() else { throw GroupLinkError.hostGone }
        await member.started(peer: peer, connection: connection)
        _ = try await member.greet(token: token, name: name)
        return member
    }

    private func started(peer: WebSocketPeer, connection: Task<Void, Never>) {
        self.peer = peer
        self.connection = connection
        Task { [weak self] in await self?.watchHost() }
    }

    private func greet(token: String, name: String) async throws -> GroupMessage.Welcome {
        await peer?.send(.hello(.init(token: token, member: name, capabilities: ["netclock", "prepared-start"])))
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(5))
            await self?.failWelcome(GroupLinkError.notWelcomed)
        }
        return try await withCheckedThrowingContinuation { continuation in
            if let handshakeOutcome { continuation.resume(with: handshakeOutcome) } else { welcomeWaiter = continuation }
        }
    }

    /// Ends the handshake once: the waiting `greet` gets `outcome`, or keeps it for when it waits.
    private func endHandshake(_ outcome: Result<GroupMessage.Welcome, any Error>) {
        guard handshakeOutcome == nil else { return }
        handshakeOutcome = outcome
        welcomeWaiter?.resume(with: outcome)
        welcomeWaiter = nil
    }

    private func failWelcome(_ error: any Error) { endHandshake(.failure(error)) }

    public func attach(_ medium: NetworkCoordinationMedium) { self.medium = medium }

    /// The member's id on the host (from the welcome).
    public var memberID: String { welcome?.memberID ?? "?" }
    private func hostID(_ id: ParticipantID) -> String { "\(memberID).\(id.rawValue)" }
    private func localID(_ hostID: String) -> ParticipantID? {
        let prefix = memberID + "."
        guard hostID.hasPrefix(prefix) else { return nil }
        return ParticipantID(String(hostID.dropFirst(prefix.count)))
    }

    // MARK: GroupUplink

    public func join(_ id: ParticipantID, item: String) async throws {
        try Self.check(await request { .join(.init(request: $0, participant: self.hostID(id), item: item)) })
    }

    public func leave(_ id: ParticipantID) async { await peer?.send(.leave(.init(participant: hostID(id)))) }

    public func propose(_ intent: GroupIntent, item: String, from id: ParticipantID) async throws {
        try Self.check(await request {
            .command(.init(request: $0, participant: self.hostID(id), item: item, intent: WireIntent(intent)))
        })
    }

    public func suspensionsChanged(_ id: ParticipantID, reasons: [SuspensionReason]) async {
        await peer?.send(.suspensions(.init(participant: hostID(id), reasons: reasons.map(\.rawValue))))
    }

    public func rejoin(_ id: ParticipantID) async throws {
        try Self.check(await request { .rejoin(.init(request: $0, participant: self.hostID(id))) })
    }

    /// Leaves the session (`q`): the host removes every view of this member.
    public func leaveSession() async {
        await peer?.send(.leave(.init(participant: nil)))
        await peer?.close()
        // Until the host has answered the close (the connection ended), at most `leaveFlushLimit`: the two frames
        // are only queued on the channel, and a process that quits right after `q` lost them. The host then said
        // "dropped: connection closed" instead of "left" (MemberProcessTests, 1 of 3 runs of test-repeat).
        let deadline = ContinuousClock.now + Self.leaveFlushLimit
        while !lost, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// How long `leaveSession` waits for the host to close the connection after the leave.
    static let leaveFlushLimit: Duration = .seconds(2)

    private func request(_ make: (Int) -> GroupMessage) async -> WireOutcome {
        guard let peer, !lost else { return .failed("\(GroupLinkError.hostGone)") }
        let (request, message) = requests.open(make)
        await peer.send(message)
        return await withCheckedContinuation { requests.wait(request, $0) }.outcome
    }

    private static func check(_ outcome: WireOutcome) throws {
        switch outcome {
        case .ok: return
        case .missedStart: throw CoordinationError.missedStartInstant
        case .failed(let why): throw GroupLinkError.failed(why)
        }
    }

    // MARK: From the host

    private func receive(_ inbound: WebSocketInbound) async {
        lastHeard = .now
        // Read first: a ping's answer says when it arrived on the clock that follows the host's.
        let arrived = medium?.clock.time
        guard case .text(let text) = inbound else { return log("group session: host sent a binary frame: ignored") }
        let message: GroupMessage
        do {
            message = try GroupMessageCodec.decode(text)
            try validator.validate(message)
        } catch {
            log("group session: from the host: \(error)")
            return
        }
        switch message {
        case .welcome(let welcome):
            self.welcome = welcome
            await medium?.hostGroups(welcome.groups.map(\.groupState))
            endHandshake(.success(welcome))
        case .prepare(let m):
            perform(m.request, m.participant, DelegatedCommand.fromHost(
                kind: .buffer(itemTime: ClockTime(nanoseconds: m.itemTimeNs), rate: m.rate),
                expectedItemIdentifier: m.item, originator: m.originator.map(ParticipantID.init)))
        case .start(let m):
            perform(m.request, m.participant, DelegatedCommand.fromHost(
                kind: .play(itemTime: ClockTime(nanoseconds: m.itemTimeNs), rate: m.rate,
                            atClockTime: ClockTime(nanoseconds: m.atClockNs)),
                expectedItemIdentifier: m.item, originator: m.originator.map(ParticipantID.init)))
        case .pause(let m):
            perform(m.request, m.participant, DelegatedCommand.fromHost(
                kind: .pause(itemTime: ClockTime(nanoseconds: m.itemTimeNs)),
                expectedItemIdentifier: m.item, originator: m.originator.map(ParticipantID.init)))
        case .event(let m):
            guard let id = localID(m.participant) else { return }
            await medium?.hostEvent(Self.event(m.event, for: m.participant), for: id)
        case .participants(let list):
            await medium?.hostParticipants(list.map(\.info))
            notices.yield(.participants(list.map(\.id)))
        case .end(let end):
            notices.yield(.ended(end.reason))
        case .reply(let reply):
            if !requests.resolve(reply) { log("group session: host replied to unknown request \(reply.request)") }
        case .error(let error):
            if !welcomeFailed(error), let request = error.request,
               requests.resolve(.init(request: request, outcome: .failed("refused (\(error.code.rawValue)): \(error.detail)"))) { return }
            log("group session: the host refused a message: \(error.code.rawValue): \(error.detail)")
        case .ping(let ping):
            await peer?.send(.pong(.init(sequence: ping.sequence, sentNs: ping.sentNs, receivedNs: arrived?.nanoseconds)))
        default:
            break
        }
    }

    /// A refusal before the welcome (a wrong token) ends the handshake with that reason.
    private func welcomeFailed(_ error: GroupMessage.ErrorMessage) -> Bool {
        guard welcome == nil, handshakeOutcome == nil else { return false }
        failWelcome(GroupLinkError.refused(error.code, error.detail))
        return true
    }

    private static func event(_ event: WireEvent, for participant: String) -> CoordinatorEvent {
        switch event {
        case .rateChanged(let rate, let originator):
            return .rateChanged(rate: rate, originator: originator.map(ParticipantID.init),
                                byOtherParticipant: originator != participant)
        case .timeJumped(let ns, let originator):
            return .timeJumped(to: ClockTime(nanoseconds: ns), originator: originator.map(ParticipantID.init),
                               byOtherParticipant: originator != participant)
        case .joined(let state):
            return .joined(state.groupState)
        }
    }

    /// The host's command for a view, carried out off the read loop (a prepare takes a preroll); the reply says
    /// how it went.
    private func perform(_ request: Int, _ participant: String, _ command: DelegatedCommand) {
        let peer = self.peer
        guard let id = localID(participant), let medium else {
            Task { await peer?.send(.reply(.init(request: request, outcome: .failed("no view \(participant) here")))) }
            return
        }
        // In order per view: a newer command (the newest wins on the host) is applied after the one before it.
        let previous = commandsInFlight[participant]
        commandsInFlight[participant] = Task {
            await previous?.value
            let result: Result<Void, any Error>
            let began = ContinuousClock.now
            do { try await medium.hostCommand(command, for: id); result = .success(()) } catch { result = .failure(error) }
            // A prepare's answer says how long the view took (the host predicts start instants from it).
            var prepared: UInt64?
            if case .buffer = command.kind, case .success = result {
                prepared = UInt64((ContinuousClock.now - began) / .nanoseconds(1))
            }
            await peer?.send(.reply(.init(request: request, outcome: WireOutcome(result), preparedNs: prepared)))
        }
    }

    // MARK: Losing the host

    private func watchHost() async {
        while !lost {
            try? await Task.sleep(for: .milliseconds(500))
            if ContinuousClock.now - lastHeard > Self.hostSilenceLimit {
                connectionEnded("nothing heard for \(Self.hostSilenceLimit)")
                await peer?.close()
            }
        }
    }

    private func connectionEnded(_ why: String) {
        guard !lost else { return }
        lost = true
        failWelcome(GroupLinkError.hostGone)
        requests.failAll(.failed("\(GroupLinkError.hostGone)"))
        notices.yield(.hostLost(why))
        notices.finish()
    }
}
