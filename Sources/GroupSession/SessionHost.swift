import Coordination
import Foundation
import GStreamer
import GroupProtocol
import NIOCore
import NIOWebSocket

/// What a session host offers its members.
public struct SessionHostConfiguration: Sendable {
    public var token: String
    /// The items this session coordinates; a view joining with another is refused (`unknownItem`).
    public var items: [String]
    /// The host's media, for members that join with `--views N,…`.
    public var media: [WireViewMedia]
    /// The host's net clock (GstNetTimeProvider); nil: members on this machine use the system clock itself.
    public var clock: WireClockAddress?
    public var heartbeat: Duration = .milliseconds(500)
    /// A member not heard from for this long is dropped (its views leave the group; the others play on).
    public var dropAfter: Duration = .seconds(3)
    /// A member view's join that has not ended after this long says where it stands, and again as often after.
    public var slowJoinNotice: Duration = .seconds(5)

    public init(token: String, items: [String], media: [WireViewMedia], clock: WireClockAddress?) {
        self.token = token
        self.items = items
        self.media = media
        self.clock = clock
    }
}

/// The session host: a WebSocket listener in front of the host's own `PlaybackCoordinationMedium`, which stays
/// the one authority for the group (its barrier, planners and start instants). Each member connection is a
/// `RemoteMember`, whose views take part as proxy participants.
///
/// The start margin: a start instant C must reach every member before C. The host raises the medium's margin
/// floor to `networkMarginBase` + the slowest member's measured round trip while members are connected: "play at C"
/// travels one way, so a whole round trip covers it even on a path where one direction takes nearly all of it, and
/// the base covers the JSON, the actor hops and the player's start on a loaded two-core machine (a few ms). A start
/// that still arrives late is answered `missedStart` and that view is caught up like a late joiner (~150-250 ms),
/// and the medium's margin policy doubles its extra after it. Two round trips (before) cost every group command
/// about one more round trip: `Scripts/bench-network`, 20 ± 5 ms relayed each way, seek → aligned 122-158 ms with
/// one against 171-194 ms with two (2 and 4 members, 2 runs each, interleaved), no start missed in either.
///
/// Threading: an actor; it owns the members table, the listener and the round-trip figures.
public actor SessionHost {
    public nonisolated let medium: PlaybackCoordinationMedium
    public nonisolated let configuration: SessionHostConfiguration
    private let log: @Sendable (String) -> Void
    private var members: [String: RemoteMember] = [:]
    private var nextMember = 1
    private var roundTrips: [String: Duration] = [:]
    /// Each member's latest one-way delays, host → member (`oneWayWindow` of them), from its pongs.
    private var oneWays: [String: [Duration]] = [:]
    private var listener: NIOAsyncChannel<EventLoopFuture<WebSocketTransport.Upgrade>, Never>?
    private var serving: Task<Void, Never>?
    private var localMargin: Duration?
    public static let networkMarginBase: Duration = .milliseconds(25)

    public init(medium: PlaybackCoordinationMedium, configuration: SessionHostConfiguration,
                log: @escaping @Sendable (String) -> Void) {
        self.medium = medium
        self.configuration = configuration
        self.log = log
    }

    /// Listens on `host:port` (port 0: any free port); returns the port.
    public func start(host: String, port: Int) async throws -> Int {
        let (bound, server) = try await WebSocketTransport.listen(host: host, port: port) { _ in }
        listener = server
        serving = Task { [weak self] in
            do {
                try await withThrowingDiscardingTaskGroup { group in
                    try await server.executeThenClose { inbound in
                        for try await upgrade in inbound {
                            group.addTask { await self?.serve(upgrade) }
                        }
                    }
                }
            } catch {
                // The listener closed (end of session) or failed: no new members; the running ones are served.
            }
        }
        return bound
    }

    private nonisolated func serve(_ upgrade: EventLoopFuture<WebSocketTransport.Upgrade>) async {
        guard case .websocket(let channel)? = try? await upgrade.get() else { return }
        try? await channel.executeThenClose { inbound, outbound in
            let peer = WebSocketPeer(outbound: outbound, masks: false)
            let member = await self.admit(peer)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await WebSocketPeer.readFrames(inbound, peer: peer) { await member.receive($0) }
                    await member.drop("connection closed")
                }
                group.addTask { await self.watch(member, peer: peer) }
                await group.next()
                group.cancelAll()
            }
            await self.remove(member)
        }
    }

    private func admit(_ peer: WebSocketPeer) -> RemoteMember {
        let id = "m\(nextMember)"
        nextMember += 1
        let member = RemoteMember(
            id: id, peer: peer, medium: medium, token: configuration.token, items: Set(configuration.items),
            welcome: { [weak self] id in await self?.welcome(for: id) ?? .init(memberID: id, clock: nil, startMarginMs: 0,
                                                                                groups: [], participants: [], items: [],
                                                                                media: [], heartbeatMs: 0) },
            log: log, slowJoinNotice: configuration.slowJoinNotice,
            rttMeasured: { [weak self] id, rtt, oneWay in await self?.measured(id, rtt, oneWay: oneWay) })
        members[id] = member
        return member
    }

    /// Heartbeat: a ping every `heartbeat` (its pong measures the round trip); a member silent for `dropAfter`
    /// is dropped and its connection closed.
    private nonisolated func watch(_ member: RemoteMember, peer: WebSocketPeer) async {
        var sequence = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.heartbeat)
            if await member.gone { return }
            let quiet = ContinuousClock.now - (await member.lastHeard)
            if quiet > configuration.dropAfter {
                await member.drop("nothing heard for \(quiet.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
                await peer.close()
                return
            }
            sequence += 1
            // On the group's clock, which the member's follows: its pong can say how long the ping took one way.
            await peer.send(.ping(.init(sequence: sequence, sentNs: medium.clock.time.nanoseconds)))
        }
    }

    private func remove(_ member: RemoteMember) async {
        members[member.id] = nil
        roundTrips[member.id] = nil
        oneWays[member.id] = nil
        await updateMargin()
    }

    private func welcome(for id: String) async -> GroupMessage.Welcome {
        // The margin covers the network from the welcome on, before the first heartbeat has measured a round trip
        // (a command right after joining would otherwise start the member 2 ms ahead: a missed instant).
        if roundTrips[id] == nil, members[id] != nil {
            roundTrips[id] = .zero
            await updateMargin()
        }
        var groups: [WireGroupState] = []
        for item in configuration.items {
            if let state = await medium.groupState(for: item) { groups.append(WireGroupState(state)) }
        }
        let participants = await medium.participants().map(WireParticipant.init)
        let margin = await medium.startMargin
        return .init(memberID: id, clock: configuration.clock, startMarginMs: margin.milliseconds, groups: groups,
                     participants: participants, items: configuration.items, media: configuration.media,
                     heartbeatMs: Int(configuration.heartbeat.milliseconds))
    }

    private func measured(_ id: String, _ rtt: Duration, oneWay: Duration?) async {
        guard members[id] != nil else { return }
        roundTrips[id] = rtt
        if let oneWay {
            oneWays[id, default: []].append(oneWay)
            if oneWays[id]!.count > Self.oneWayWindow { oneWays[id]!.removeFirst() }
        }
        await updateMargin()
    }

    /// While members are connected the margin floor covers the slowest round trip; without them it goes back.
    private func updateMargin() async {
        if localMargin == nil { localMargin = await medium.startMargin }
        guard let slowest = roundTrips.values.max() else {
            if let localMargin { await medium.setStartMargin(localMargin) }
            await medium.setStartPrediction(delivery: nil)
            return
        }
        // Whole milliseconds: a margin that changes by microseconds with every ping would only add noise.
        let wanted = Self.networkMarginBase + .milliseconds(Int64(slowest.milliseconds.rounded(.up)))
        if await medium.startMargin != wanted { await medium.setStartMargin(wanted) }
        // Every member's longest recent one-way delay, when every member has said one.
        let longestOneWays = roundTrips.keys.map { oneWays[$0]?.max() }
        let slowestOneWay = longestOneWays.contains(where: { $0 == nil }) ? nil : longestOneWays.compactMap { $0 }.max()
        await medium.setStartPrediction(delivery: Self.predictionDelivery(slowestOneWay: slowestOneWay,
                                                                          slowestRoundTrip: slowest),
                                        roundTrip: slowest)
    }

    /// A predicted start's delivery (`StartPrediction`): how long "prepare" may take to reach the farthest member,
    /// plus `predictionDeliveryBase` for the JSON, the actor hops and a busy reader. Measured one way where every
    /// member's pongs say it: the longest of each member's last `oneWayWindow` pings (behind 20 ± 5 ms of relayed
    /// jitter, ~24-25 ms). Otherwise the slowest round trip, whose second half is then the slack for jitter and a
    /// lopsided path; `networkMarginBase` while a member's round trip is not measured yet (zero).
    public static func predictionDelivery(slowestOneWay: Duration?, slowestRoundTrip: Duration) -> Duration {
        func wholeMilliseconds(_ d: Duration) -> Duration { .milliseconds(Int64(d.milliseconds.rounded(.up))) }
        if let slowestOneWay { return predictionDeliveryBase + wholeMilliseconds(slowestOneWay) }
        guard slowestRoundTrip > .zero else { return networkMarginBase }
        return predictionDeliveryBase + wholeMilliseconds(slowestRoundTrip)
    }
    public static let predictionDeliveryBase: Duration = .milliseconds(5)
    /// How many of a member's latest one-way delays its delivery is the longest of (4 s of 0.5 s heartbeats).
    public static let oneWayWindow = 8

    /// Round trips measured by the heartbeat, per member.
    public var memberRoundTrips: [String: Duration] { roundTrips }
    /// The latest one-way delays host → member measured by the heartbeat, per member (`oneWayWindow` at most).
    public var memberOneWayDelays: [String: [Duration]] { oneWays }
    public var memberCount: Int { members.count }

    /// `end` on the host: every member is told the session is over, then the listener closes. Returns once every
    /// member has closed its side (it answers the close frame after reading the end) or `patience` has passed.
    ///
    /// Why it waits: a send only queues the frame. Returning at once let the CLI cancel the connections and exit
    /// with the end still queued, and a member then saw its host lost and stayed to rejoin instead of ending
    /// (MemberProcessTests, 1 run in 5 of a repeat; `ControlChannelTests` checks the end is there on return).
    public func end(reason: String = "the host ended the session", patience: Duration = .seconds(2)) async {
        for (_, member) in members.sorted(by: { $0.key < $1.key }) {
            await member.send(.end(.init(reason: reason)))
            await member.close()
        }
        let deadline = ContinuousClock.now + patience
        while !members.isEmpty, ContinuousClock.now < deadline {
            // `remove` (each member's connection ending) runs on this actor meanwhile.
            try? await Task.sleep(for: .milliseconds(10))
        }
        try? await listener?.channel.close()
        serving?.cancel()
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
