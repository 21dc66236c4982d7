import Coordination
import Foundation
import GStreamer
import GroupProtocol

/// One member connection on the host: validates what it sends (`MemberMessageValidator`), keeps a proxy
/// participant per member view on the host's medium, turns the medium's commands for them into requests and the
/// member's answers back into results, forwards the group's events, and drops the member when it goes quiet.
///
/// Threading: an actor; it owns the validator, the proxies, the requests in flight and the last-heard time.
actor RemoteMember {
    nonisolated let id: String
    private let peer: WebSocketPeer
    private let medium: PlaybackCoordinationMedium
    private let welcome: @Sendable (String) async -> GroupMessage.Welcome
    private let log: @Sendable (String) -> Void
    /// Each pong's round trip, and its one-way delay host → member when the member said when the ping arrived.
    private let rttMeasured: @Sendable (String, Duration, Duration?) async -> Void
    /// How often a view's join that has not ended yet says where it stands (`SessionHostConfiguration`).
    private let slowJoinNotice: Duration
    private var validator: MemberMessageValidator
    private var name = "?"

    private struct Proxy {
        var coordinator: PlaybackCoordinator
        var target: RemoteViewTarget
        var forwarder: Task<Void, Never>
    }
    private var proxies: [String: Proxy] = [:]
    private var requests = RequestTable()
    /// Each view's latest suspension update being applied (its later command or rejoin waits for it).
    private var suspensionUpdates: [String: Task<Void, Never>] = [:]
    private var lastParticipants: [WireParticipant]?
    private(set) var lastHeard = ContinuousClock.now
    private(set) var gone = false
    /// The member said it leaves (`leave` without a participant): its connection's end is no drop.
    private var left = false

    init(id: String, peer: WebSocketPeer, medium: PlaybackCoordinationMedium, token: String, items: Set<String>,
         welcome: @escaping @Sendable (String) async -> GroupMessage.Welcome, log: @escaping @Sendable (String) -> Void,
         slowJoinNotice: Duration = .seconds(5), rttMeasured: @escaping @Sendable (String, Duration, Duration?) async -> Void) {
        self.id = id
        self.peer = peer
        self.medium = medium
        self.welcome = welcome
        self.log = log
        self.rttMeasured = rttMeasured
        self.slowJoinNotice = slowJoinNotice
        self.validator = MemberMessageValidator(token: token, items: items, memberID: id)
    }

    var label: String { "member \(id) (\(name))" }
    var isGreeted: Bool { validator.isGreeted }
    var views: [String] { proxies.keys.sorted() }

    // MARK: Requests to the member

    /// Sends the message `make` builds with a fresh request number and waits for the member's reply (or for the
    /// member to be dropped: `failed`).
    func request(_ make: (Int) -> GroupMessage) async -> GroupMessage.Reply {
        guard !gone else { return .init(request: 0, outcome: .failed("member \(id) is gone")) }
        let (request, message) = requests.open(make)
        await peer.send(message)
        guard !gone else { return .init(request: request, outcome: .failed("member \(id) is gone")) }
        return await withCheckedContinuation { requests.wait(request, $0) }
    }

    /// The host → member delay of one ping: its arrival on the member's clock less its departure on the host's;
    /// nil when the member did not say, or when the figure is impossible (negative, or longer than the round trip:
    /// the member's clock is not synchronised yet).
    static func oneWay(sent: UInt64, received: UInt64?, roundTrip: UInt64) -> Duration? {
        guard let received, received >= sent, received - sent <= roundTrip else { return nil }
        return .nanoseconds(Int64(received - sent))
    }

    /// Two requests sent back to back, the second without waiting for the first's answer, and both answers: a
    /// predicted start's "prepare" and "start at C" (the member carries out one view's commands in order). Waiting
    /// for the first answer would cost the second a round trip.
    func requests(_ first: (Int) -> GroupMessage,
                  then second: (Int) -> GroupMessage) async -> (GroupMessage.Reply, GroupMessage.Reply) {
        guard !gone else {
            let gone = GroupMessage.Reply(request: 0, outcome: .failed("member \(id) is gone"))
            return (gone, gone)
        }
        let (one, firstMessage) = requests.open(first)
        let (two, secondMessage) = requests.open(second)
        await peer.send(firstMessage)
        await peer.send(secondMessage)
        let firstReply = await withCheckedContinuation { requests.wait(one, $0) }
        let secondReply = await withCheckedContinuation { requests.wait(two, $0) }
        return (firstReply, secondReply)
    }

    // MARK: From the member

    func receive(_ inbound: WebSocketInbound) async {
        lastHeard = .now
        let message: GroupMessage
        switch inbound {
        case .binary(let bytes):
            return await reject(.binaryFrame(bytes: bytes))
        case .text(let text):
            do { message = try GroupMessageCodec.decode(text) } catch { return await reject(error) }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        do { try validator.validate(message, now: seconds) } catch { return await reject(error, request: message.request) }
        await dispatch(message)
    }

    /// One log line and an error message; the connection is closed only when it cannot go on (bad token).
    private func reject(_ violation: ProtocolViolation, request: Int? = nil) async {
        log("group session: \(label): \(violation)")
        await peer.send(.error(.init(code: violation.code, detail: violation.description, request: request)))
        if violation.closesConnection { await peer.close() }
    }

    private func dispatch(_ message: GroupMessage) async {
        switch message {
        case .hello(let hello):
            name = hello.member
            await peer.send(.welcome(await welcome(id)))
            log("group session: \(label) joined")
        case .join(let join):
            await joinView(join)
        case .command(let command):
            let participant = ParticipantID(command.participant)
            respond(command.request, after: suspensionUpdates[command.participant]) { [medium] in
                try await medium.propose(command.intent.intent, item: command.item, from: participant)
            }
        case .suspensions(let suspensions):
            let reasons = suspensions.reasons.map(SuspensionReason.init)
            log("group session: \(suspensions.participant) suspensions: \(suspensions.reasons.isEmpty ? "none" : suspensions.reasons.joined(separator: ", "))")
            // Off the read loop (a hold runs a barrier that waits for this member's own answers), in order per
            // view: the next update, command or rejoin of that view waits for this one.
            let previous = suspensionUpdates[suspensions.participant]
            suspensionUpdates[suspensions.participant] = Task { [medium] in
                await previous?.value
                await medium.suspensionsChanged(ParticipantID(suspensions.participant), reasons: reasons)
            }
        case .rejoin(let rejoin):
            let participant = ParticipantID(rejoin.participant)
            log("group session: \(rejoin.participant) asks to join the group's timeline")
            respond(rejoin.request, after: suspensionUpdates[rejoin.participant], joining: rejoin.participant) { [medium] in
                try await medium.rejoin(participant)
            }
        case .leave(let leave):
            let leaving = leave.participant.map { [$0] } ?? Array(proxies.keys)
            for view in leaving { await removeProxy(view) }
            if leave.participant == nil { left = true }
            log("group session: \(label) left" + (leave.participant.map { " with \($0)" } ?? ""))
        case .reply(let reply):
            if !requests.resolve(reply) { await reject(.unknownRequest(reply.request)) }
        case .error(let error):
            log("group session: \(label) refused a message: \(error.code.rawValue): \(error.detail)")
        case .ping(let ping):
            await peer.send(.pong(ping))
        case .pong(let ping):
            // The host's pings are stamped on the group's clock (`SessionHost.watch`).
            let now = medium.clock.time.nanoseconds
            guard now >= ping.sentNs else { return }
            let roundTrip = now - ping.sentNs
            await rttMeasured(id, .nanoseconds(Int64(roundTrip)), Self.oneWay(sent: ping.sentNs, received: ping.receivedNs,
                                                                              roundTrip: roundTrip))
        default:
            break   // host-bound kinds were refused by the validator
        }
    }

    /// Runs a group operation off the read loop (a barrier waits for this very member's answers) and replies.
    /// The join of a view (`joining`) that has not ended after `slowJoinNotice` says where it stands, and again
    /// as often until it ends: a member's view waiting for the group shows only "waiting", and why
    /// is known here (MemberProcessTests once saw a view wait 15 s, with nothing said on either side).
    private func respond(_ request: Int, after update: Task<Void, Never>? = nil, joining view: String? = nil,
                         _ operation: @escaping @Sendable () async throws -> Void) {
        Task {
            let asked = ContinuousClock.now, every = self.slowJoinNotice
            let notices = view.map { view in
                Task { [weak self] in
                    while (try? await Task.sleep(for: every)) != nil {
                        await self?.reportSlowJoin(view, asked: asked)
                    }
                }
            }
            await update?.value
            let result: Result<Void, any Error>
            do { try await operation(); result = .success(()) } catch { result = .failure(error) }
            // No line after the reply: a report under way finishes first.
            notices?.cancel()
            await notices?.value
            await self.peer.send(.reply(.init(request: request, outcome: WireOutcome(result))))
        }
    }

    /// One line: how long `view` has been joining, the requests to its member still unanswered, whether it waits
    /// for the group's start being prepared, and its last catch-up aims.
    private func reportSlowJoin(_ view: String, asked: ContinuousClock.Instant) async {
        guard !gone else { return }
        let now = ContinuousClock.now
        let pending = requests.unanswered.map { "\($0.kind.rawValue) #\($0.request) for \(Self.seconds(now - $0.since))" }
        var parts = [pending.isEmpty ? "no request to \(id) unanswered" : "unanswered: " + pending.joined(separator: ", ")]
        if let item = await proxies[view]?.coordinator.itemIdentifier {
            let waiting = await medium.joinersWaitingForStart(of: item)
            if waiting > 0 { parts.append("\(waiting) joining view(s) wait for the group's start being prepared") }
        }
        let aims = await medium.catchUpAims.filter { $0.participant.rawValue == view }.suffix(3)
        parts.append(aims.isEmpty ? "no catch-up aim yet" : "last aims: " + aims.map(\.description).joined(separator: "; "))
        log("group session: \(view) is still joining the group's timeline after \(Self.seconds(now - asked)): "
            + parts.joined(separator: "; "))
    }

    private static func seconds(_ d: Duration) -> String { String(format: "%.1f s", d.inSeconds) }

    private func joinView(_ join: GroupMessage.Join) async {
        let target = RemoteViewTarget(participant: join.participant, member: self)
        let coordinator = PlaybackCoordinator(id: ParticipantID(join.participant), defaultIdentifier: join.item, target: target)
        let events = await coordinator.events()
        let participant = join.participant
        let forwarder = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.forward(event, for: participant)
            }
        }
        proxies[participant] = Proxy(coordinator: coordinator, target: target, forwarder: forwarder)
        do {
            try await coordinator.coordinate(using: medium)
            await peer.send(.reply(.init(request: join.request, outcome: .ok)))
            log("group session: \(participant) joined item \(join.item)")
        } catch {
            forwarder.cancel()
            proxies[participant] = nil
            await peer.send(.reply(.init(request: join.request, outcome: .failed("\(error)"))))
        }
    }

    private func forward(_ event: CoordinatorEvent, for participant: String) async {
        guard !gone else { return }
        switch event {
        case .rateChanged(let rate, let originator, _):
            await peer.send(.event(.init(participant: participant, event: .rateChanged(rate: rate, originator: originator?.rawValue))))
        case .timeJumped(let time, let originator, _):
            await peer.send(.event(.init(participant: participant,
                                         event: .timeJumped(toNs: time.nanoseconds, originator: originator?.rawValue))))
        case .joined(let state):
            await peer.send(.event(.init(participant: participant, event: .joined(WireGroupState(state)))))
        case .participantsChanged(let list):
            // Every proxy hears the same list: it goes to the member once.
            let wire = list.map(WireParticipant.init)
            guard wire != lastParticipants else { return }
            lastParticipants = wire
            await peer.send(.participants(wire))
        case .suspensionBegan, .suspensionEnded:
            break   // the member's own suspensions: it knows them
        }
    }

    private func removeProxy(_ view: String) async {
        guard let proxy = proxies.removeValue(forKey: view) else { return }
        proxy.forwarder.cancel()
        await proxy.coordinator.disconnect()
    }

    /// The member left, its connection closed or it went quiet: its views leave the group (the others play on)
    /// and every request in flight fails.
    func drop(_ reason: String) async {
        guard !gone else { return }
        gone = true
        if validator.isGreeted && !left { log("group session: \(label) dropped: \(reason)") }
        requests.failAll(.failed("member \(id) dropped"))
        for view in proxies.keys.sorted() { await removeProxy(view) }
    }

    func send(_ message: GroupMessage) async { await peer.send(message) }
    func close() async { await peer.close() }
}
