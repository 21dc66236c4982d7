import Coordination
import GStreamer
import GroupProtocol
import Synchronization

/// A member's whole stay in a session: the link to the host (`SessionMember`), the clock following the host's,
/// the `NetworkCoordinationMedium` over them and the net clock guard — and, when the host is lost, a new link
/// once a host answers again at the same address with the same token (every second), onto which the views move.
///
/// Threading: an actor; it owns the current link, the stage it moves, and the notice stream's continuation.
public actor MemberSession {
    /// One connection to a host and what was built on it.
    public struct Link: Sendable {
        public let member: SessionMember
        public let welcome: GroupMessage.Welcome
        public let medium: NetworkCoordinationMedium
        public let clock: Clock
        public let netClock: NetClientClock?
        /// Tells when `netClock` has settled (nil without a net clock).
        public let settlement: NetClockSettlement?

        /// Returns once the views may join the group on this link's clock: at once without a net clock, else
        /// when the clock has settled (`NetClockSettling`), or after `MemberSession.settleLimit` if it has not: a
        /// view that joins on an unsettled clock is off by the clock's error (mostly under a few ms; the audio
        /// follows as it settles), which is better than a view that never plays because a busy machine keeps the
        /// offsets moving. Meanwhile the views are prerolled, waiting. The first answer is kept: every view of
        /// the link waits for the same one, so a second view never waits the limit again.
        public func waitUntilClockSettled() async {
            _ = await settledWait.value(settlement)
        }

        /// The link's one bounded wait, and how it ended (`SessionClock.settledLabel` says it).
        let settledWait: SettledWait
    }

    /// A bounded wait for a link's clock, done once and shared (`Link.waitUntilClockSettled`), reported once.
    final class SettledWait: Sendable {
        private let task = Mutex<Task<NetClockSettlement.BoundedWait, Never>?>(nil)
        private let limit: Duration
        private let log: @Sendable (String) -> Void

        init(limit: Duration, log: @escaping @Sendable (String) -> Void) {
            self.limit = limit
            self.log = log
        }

        deinit { task.withLock { $0?.cancel() } }

        func value(_ settlement: NetClockSettlement?) async -> NetClockSettlement.BoundedWait? {
            guard let settlement else { return nil }
            let wait = task.withLock { current in
                if let current { return current }
                let limit = self.limit, log = self.log
                let started = Task {
                    let result = await settlement.waitUntilSettled(limit: limit)
                    if let line = SessionClock.settledLabel(result, limit: limit) { log("group session: \(line)") }
                    return result
                }
                current = started
                return started
            }
            return await wait.value
        }
    }

    /// The longest a link's views wait for its clock to settle before they join on it anyway. Settling takes
    /// 0.3–0.4 s after sync on an idle machine behind 20 ± 5 ms of jitter (`NetClockSettling`); under the test
    /// suite's load a member once showed no frame in 30 s.
    public static let settleLimit: Duration = .seconds(5)

    public nonisolated let host: String
    public nonisolated let port: Int
    private let token: String
    private let name: String
    /// The net clock settings of every link (`NetClockTuning.standard` unless a bench asks otherwise).
    private let clockTuning: NetClockTuning
    private let log: @Sendable (String) -> Void
    public private(set) var current: Link {
        didSet { followed.withLock { $0 = current.netClock } }
    }
    /// The net clock of the current link, readable from any thread (the views' tags show its state).
    private nonisolated let followed: Mutex<NetClientClock?>
    private var stage: NetworkCoordinatedStage?
    private var clockGuard: NetClockGuard?
    private var leaving = false
    public nonisolated let notices: AsyncStream<SessionNotice>
    private let noticeContinuation: AsyncStream<SessionNotice>.Continuation

    private init(host: String, port: Int, token: String, name: String, clockTuning: NetClockTuning,
                 log: @escaping @Sendable (String) -> Void, link: Link) {
        self.host = host
        self.port = port
        self.token = token
        self.name = name
        self.clockTuning = clockTuning
        self.log = log
        self.current = link
        self.followed = Mutex(link.netClock)
        (notices, noticeContinuation) = AsyncStream<SessionNotice>.makeStream()
    }

    /// Connects, is welcomed, follows the host's clock (synchronised) and builds the medium. Throws
    /// `GroupLinkError.refused(.badToken, …)` for a wrong token, `NetClockError` when the clock does not sync.
    public static func join(host: String, port: Int, token: String, name: String,
                            clockTuning: NetClockTuning = .standard,
                            log: @escaping @Sendable (String) -> Void) async throws -> MemberSession {
        let link = try await connect(host: host, port: port, token: token, name: name, clockTuning: clockTuning, log: log)
        let session = MemberSession(host: host, port: port, token: token, name: name, clockTuning: clockTuning,
                                    log: log, link: link)
        await session.watch(link)
        return session
    }

    private static func connect(host: String, port: Int, token: String, name: String, clockTuning: NetClockTuning,
                                log: @escaping @Sendable (String) -> Void) async throws -> Link {
        let member = try await SessionMember.connect(host: host, port: port, token: token, name: name, log: log)
        guard let welcome = await member.welcome else { throw GroupLinkError.notWelcomed }
        var clock = Clock.systemClock()
        var netClock: NetClientClock?
        var settlement: NetClockSettlement?
        if let announced = welcome.clock {
            do {
                let following = try await SessionClock.follow(announced, sessionHost: host, tuning: clockTuning)
                netClock = following.clock
                settlement = following.settlement
                clock = following.clock
            } catch {
                await member.leaveSession()
                throw error
            }
        }
        let medium = NetworkCoordinationMedium(name: "member \(welcome.memberID) of \(host):\(port)", clock: clock,
                                               uplink: member)
        await member.attach(medium)
        return Link(member: member, welcome: welcome, medium: medium, clock: clock, netClock: netClock,
                    settlement: settlement, settledWait: SettledWait(limit: settleLimit, log: log))
    }

    /// "net clock synced, RTT 0.07 ms" for the current link; nil without a net clock.
    public nonisolated var clockLabel: String? { followed.withLock { $0 }.map(SessionClock.statusLabel) }

    /// The stage whose views this session moves to a returning host; its views are guarded by the net clock.
    public func attach(_ stage: NetworkCoordinatedStage) {
        self.stage = stage
        startGuard()
    }

    private func startGuard() {
        guard let stage, let netClock = current.netClock else { return }
        let guarded = NetClockGuard(clock: netClock, coordinators: { stage.coordinators }, report: log)
        guarded.start()
        clockGuard = guarded
    }

    private func watch(_ link: Link) {
        // The views wait for the same answer; this makes sure it is reported even before a view asks.
        Task { await link.waitUntilClockSettled() }
        Task {
            for await notice in link.member.noticeStream {
                await self.handle(notice)
            }
        }
    }

    private func handle(_ notice: SessionNotice) async {
        // After the host ended the session its connection closes too: that is no loss to report.
        if case .hostLost = notice, leaving { return }
        noticeContinuation.yield(notice)
        switch notice {
        case .ended:
            leaving = true
        case .hostLost:
            await rejoinWhenBack()
        default:
            break
        }
    }

    /// Tries the same address every second until a host takes this member in again (or it leaves).
    private func rejoinWhenBack() async {
        while !leaving {
            try? await Task.sleep(for: .seconds(1))
            guard !leaving else { return }
            do {
                let link = try await Self.connect(host: host, port: port, token: token, name: name,
                                                  clockTuning: clockTuning, log: log)
                current = link
                // Progress: the views' move to the new link waits for its clock (up to `settleLimit`) and their
                // catch-ups; "rejoined" comes after that.
                log("group session: a host answers at \(host):\(port) again: joining its group as \(link.welcome.memberID)")
                // The old link's guard stops, and the suspensions it holds end, while the views are between the
                // two media: left held, a view would ignore the catch-up of its join (told it joined, it played on
                // alone; with 5 ms polls the new clock often settled before that guard's next look); ended through
                // a medium, it would rejoin again (through the old one in vain, the new one a second catch-up).
                let previousGuard = clockGuard
                clockGuard = nil
                if let stage {
                    try await stage.move(to: link.medium, betweenLinks: { await previousGuard?.stop() }) {
                        await link.waitUntilClockSettled()
                    }
                } else {
                    await previousGuard?.stop()
                }
                startGuard()
                noticeContinuation.yield(.rejoined(link.welcome.memberID))
                watch(link)
                return
            } catch GroupLinkError.refused(let code, let detail) {
                log("group session: the host at \(host):\(port) refused this member (\(code.rawValue): \(detail)); not trying again")
                return
            } catch {
                continue   // nobody there yet (connection refused), or its clock did not sync: next second
            }
        }
    }

    /// `q`: leaves the session (the host removes this member's views) and stops trying to rejoin.
    public func leave() async {
        leaving = true
        await current.member.leaveSession()
        noticeContinuation.finish()
    }
}
