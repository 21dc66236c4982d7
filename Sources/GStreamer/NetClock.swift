import CGStreamer
import Synchronization

/// Errors of the network clock wrappers (GstNetTimeProvider, GstNetClientClock, GstPtpClock).
public enum NetClockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The time provider could not bind its UDP socket (address in use, not a local address, …).
    case providerFailed(address: String, port: UInt16)
    /// GStreamer refused to make a client clock for that address (not resolvable).
    case clientFailed(address: String, port: UInt16)
    /// The client clock did not synchronise within the timeout.
    case notSynchronised(address: String, port: UInt16, timeout: Duration)
    /// The PTP helper (`gst-ptp-helper`) could not be started, or the PTP clock could not be made.
    case ptpUnavailable(domain: UInt32)

    public var description: String {
        switch self {
        case .providerFailed(let a, let p): return "cannot provide the clock on \(a):\(p) (UDP bind failed)"
        case .clientFailed(let a, let p): return "cannot make a network client clock for \(a):\(p)"
        case .notSynchronised(let a, let p, let t): return "network clock \(a):\(p) not synchronised within \(t)"
        case .ptpUnavailable(let d): return "PTP clock for domain \(d) unavailable (gst-ptp-helper did not start)"
        }
    }
}

/// Serves a clock's time on UDP (`GstNetTimeProvider`): members' `NetClientClock`s slave to it.
/// The provider runs its own thread inside GStreamer; releasing this object stops it.
///
/// Sendable: only immutable pointers and values are stored (see `ObjectRef`).
public final class NetTimeProvider: ObjectRef, @unchecked Sendable {
    /// The address the socket is bound to ("0.0.0.0" for all IPv4 interfaces).
    public let address: String
    /// The bound UDP port (the one the kernel chose when 0 was asked for).
    public let port: UInt16
    /// The clock whose time is served.
    public let clock: Clock

    /// Binds `address:port` (port 0: any free port, read back from `port`) and starts serving `clock`.
    public init(clock: Clock, address: String = "0.0.0.0", port: UInt16 = 0) throws(NetClockError) {
        GStreamer.ensureInitialized()
        guard let raw = gst_net_time_provider_new(clock.clock, address, gint(port)) else {
            throw .providerFailed(address: address, port: port)
        }
        self.clock = clock
        self.address = address
        // GstNetTimeProvider writes the bound port back into its "port" property after binding.
        var value = GValue()
        g_value_init(&value, .gInt)
        g_object_get_property(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GObject.self), "port", &value)
        self.port = UInt16(clamping: g_value_get_int(&value))
        g_value_unset(&value)
        super.init(takingOwnershipOf: raw)
    }

    /// Stops or resumes answering (the "active" property); the socket stays bound.
    public var isActive: Bool {
        get { (try? get("active", as: Bool.self)) ?? false }
        set { do { try set("active", newValue) } catch { preconditionFailure("GstNetTimeProvider has 'active': \(error)") } }
    }
}

/// One `gst-netclock-statistics` observation of a `NetClientClock` (posted after each exchange with the
/// provider, accepted or not).
public struct NetClockStatistics: Sendable, Equatable {
    /// Whether this observation was within the clock's bounds and updated the calibration.
    public var synchronised: Bool
    /// Round-trip time of this exchange.
    public var roundTrip: Duration
    /// The clock's running average round-trip time (observations are filtered against it).
    public var roundTripAverage: Duration
    /// The step applied to the clock by this observation (0 when it was not applied).
    public var discontinuity: Duration
    /// Linear-regression fit quality of the calibration (1 = perfect).
    public var rSquared: Double
    /// When the next exchange is due.
    public var nextPoll: Duration
    /// The calibration's offset after this observation: provider time − local time at its reference point
    /// (GStreamer's `local-clock-offset`); nil when the structure has none. It moves while the clock settles.
    public var localClockOffset: Duration?
    /// This exchange's own offset estimate: the provider's time − the local time at the exchange's midpoint
    /// (GStreamer's `remote` − `local`); off from the true offset by half the path's asymmetry. nil when absent.
    public var exchangeOffset: Duration?
    /// Where the provider's time of this exchange lay against the clock's own reading of its send and receive
    /// instants, before the exchange was applied (GStreamer's `remote-min-error`: the reading at send − the
    /// provider's time; `remote-max-error`: the reading at receive − the provider's time). A clock that reads the
    /// provider's time right has the first ≤ 0 ≤ the second. nil when absent.
    public var remoteMinError: Duration?
    public var remoteMaxError: Duration?

    public init(synchronised: Bool, roundTrip: Duration, roundTripAverage: Duration, discontinuity: Duration,
                rSquared: Double, nextPoll: Duration, localClockOffset: Duration? = nil, exchangeOffset: Duration? = nil,
                remoteMinError: Duration? = nil, remoteMaxError: Duration? = nil) {
        self.synchronised = synchronised; self.roundTrip = roundTrip; self.roundTripAverage = roundTripAverage
        self.discontinuity = discontinuity; self.rSquared = rSquared; self.nextPoll = nextPoll
        self.localClockOffset = localClockOffset; self.exchangeOffset = exchangeOffset
        self.remoteMinError = remoteMinError; self.remoteMaxError = remoteMaxError
    }

    /// Whether the exchange agreed with the clock: GStreamer's `synchronised` (the provider's time within a quarter
    /// of the average round trip of the clock's send…receive readings), or — with that quarter below `floor` —
    /// within `floor` of them. On loopback a quarter round trip is some 25-35 µs, which a busy machine's
    /// scheduling delays exceed in most exchanges: GStreamer then calls nearly every exchange not synchronised
    /// (a member under the test suite's load: 2 of 626 in 5 s) while the clock reads the provider's time to a
    /// fraction of a millisecond.
    public func agrees(within floor: Duration) -> Bool {
        if synchronised { return true }
        guard let low = remoteMinError, let high = remoteMaxError else { return false }
        let bound = max(floor, roundTripAverage / 4)
        return low < bound && high > .zero - bound
    }

    /// Reads the structure GstNetClientClock posts; nil for any other structure.
    public init?(_ structure: Structure) {
        guard structure.name == "gst-netclock-statistics" else { return nil }
        func nanoseconds(_ key: String) -> Duration? {
            switch structure.fields[key] {
            case .uint(let v): return .nanoseconds(Int64(clamping: v))
            case .int(let v): return .nanoseconds(Int64(v))
            default: return nil
            }
        }
        guard case .bool(let synced) = structure.fields["synchronised"], let rtt = nanoseconds("rtt"),
              let average = nanoseconds("rtt-average") else { return nil }
        var r2 = 0.0
        if case .double(let v) = structure.fields["r-squared"] { r2 = v }
        var exchange: Duration?
        if case .uint(let local) = structure.fields["local"], case .uint(let remote) = structure.fields["remote"] {
            exchange = .nanoseconds(Int64(bitPattern: remote &- local))
        }
        self.init(synchronised: synced, roundTrip: rtt, roundTripAverage: average,
                  discontinuity: nanoseconds("discontinuity") ?? .zero, rSquared: r2,
                  nextPoll: nanoseconds("timeout") ?? .zero, localClockOffset: nanoseconds("local-clock-offset"),
                  exchangeOffset: exchange, remoteMinError: nanoseconds("remote-min-error"),
                  remoteMaxError: nanoseconds("remote-max-error"))
    }
}

extension NetClockStatistics {
    /// The fields `init?(_ structure:)` reads.
    private static let fieldNames = ["synchronised", "rtt", "rtt-average", "discontinuity", "r-squared", "timeout",
                                     "local-clock-offset", "local", "remote", "remote-min-error", "remote-max-error"]

    /// Reads GStreamer's structure in place, only the fields used: the clock posts one per exchange (up to ~200 a
    /// second), and copying all of its 20 fields and serialising it (`Structure(raw)`) cost more than the exchange.
    init?(reading raw: UnsafePointer<GstStructure>) {
        guard gst_structure_has_name(raw, "gst-netclock-statistics") != 0 else { return nil }
        var fields: [String: Structure.Value] = [:]
        for name in Self.fieldNames {
            if let value = gst_structure_get_value(raw, name) { fields[name] = Structure.convert(value) }
        }
        self.init(Structure(name: "gst-netclock-statistics", fields: fields))
    }
}

/// A clock slaved over UDP to a `NetTimeProvider` (`GstNetClientClock`); use it as a pipeline clock
/// (`pipeline.useClock(clock)`) with one base time shared by every member.
///
/// Before its first synchronisation the clock runs from the local monotonic clock starting at `baseTime`;
/// once synchronised it reads the provider's time. `isSynchronised` / `waitForSync` tell which.
///
/// Threading: the GstNetClientClock polls on its own GStreamer thread. Statistics arrive on that thread
/// through a private bus's sync handler and go into `observer` (its state behind a `Mutex`); the "synced"
/// signal wakes `waitForSync` callers through the same observer. Nothing here blocks a Swift thread.
public final class NetClientClock: Clock, @unchecked Sendable {
    // Sendable: stored properties are immutable but `syncedConnection` (set once in init) and `limiter` (a Mutex);
    // `observer` is Sendable (Mutex-protected state) and the GObject calls made (property get/set,
    // gst_clock_is_synced) are MT-safe.
    public let address: String
    public let port: UInt16
    private let observer = NetClockObserver()
    private let statisticsBus: UnsafeMutablePointer<GstBus>
    private var syncedConnection: SignalConnection?
    private let limiter = Mutex<RoundTripLimiter?>(nil)

    // Defaults: `NetClockTuning.standard` (why, and the figures, there).
    /// Round-trip limit (see `roundTripLimit`).
    public static let defaultRoundTripLimit = NetClockTuning.standard.roundTripLimit
    /// Shortest time between polls (see `minimumUpdateInterval`).
    public static let defaultMinimumUpdateInterval = NetClockTuning.standard.minimumUpdateInterval
    /// Poll period once synchronised (see `pollInterval`).
    public static let defaultPollInterval = NetClockTuning.standard.pollInterval
    /// Observations in the calibration's regression (see `calibrationWindow`).
    public static let defaultCalibrationWindow = NetClockTuning.standard.calibrationWindow

    /// Makes a client of the provider at `address:port`. `baseTime` is the clock's time until it synchronises.
    public init(name: String = "net-client-clock", address: String, port: UInt16,
                baseTime: ClockTime = .zero,
                roundTripLimit: Duration = NetClientClock.defaultRoundTripLimit,
                minimumUpdateInterval: Duration = NetClientClock.defaultMinimumUpdateInterval,
                pollInterval: Duration = NetClientClock.defaultPollInterval,
                calibrationWindow: Int = NetClientClock.defaultCalibrationWindow) throws(NetClockError) {
        GStreamer.ensureInitialized()
        guard let raw = gst_net_client_clock_new(name, address, gint(port), GstClockTime(baseTime.nanoseconds)) else {
            throw .clientFailed(address: address, port: port)
        }
        self.address = address
        self.port = port
        statisticsBus = gst_bus_new()
        super.init(takingOwnershipOf: raw)
        let box = Unmanaged.passRetained(observer).toOpaque()
        gst_bus_set_sync_handler(statisticsBus, NetClockObserver.syncHandler, box, NetClockObserver.release)
        do {
            var value = GValue()
            g_value_init(&value, gst_bus_get_type())
            g_value_set_object(&value, statisticsBus)
            g_object_set_property(gobject, "bus", &value)
            g_value_unset(&value)
            try set("round-trip-limit", Int(roundTripLimit.nanosecondsValue))
            try set("minimum-update-interval", Int(minimumUpdateInterval.nanosecondsValue))
            try internalClock.set("timeout", Int(pollInterval.nanosecondsValue))
            // Setting the window restarts the regression (GstClock refills it; the calibration in force stays until
            // the new fit replaces it): a new client clock calibrates from its own exchanges. GStreamer shares one
            // internal clock between the client clocks of a provider in a process, and keeps it 60 s after the last
            // is released: a member's new link after a cut (`MemberSession`) would be fitted with the old link's
            // exchanges too. When the new exchanges sit off the old line by more than GStreamer's bound (a quarter
            // of the average round trip plus the exchange's own spread: tens of µs on a LAN) none is
            // "synchronised", and `NetClockSettling` waits until enough new ones outweigh the old (issue 17).
            try internalClock.set("window-size", calibrationWindow)
            let observer = self.observer
            syncedConnection = try connect("synced") { arguments in
                // synced(GstClock *clock, gboolean synced)
                guard arguments.count > 1, let synced = Bool.load(from: arguments.values + 1) else { return }
                observer.clockSynced(synced)
            }
        } catch {
            // The properties and the signal are part of GstNetClientClock's stable API (1.0 / 1.6 / 1.12).
            preconditionFailure("GstNetClientClock lacks an expected property or signal: \(error)")
        }
    }

    /// Makes a client of the provider at `address:port` with every setting of `tuning`.
    public convenience init(name: String = "net-client-clock", address: String, port: UInt16, baseTime: ClockTime = .zero,
                            tuning: NetClockTuning) throws(NetClockError) {
        try self.init(name: name, address: address, port: port, baseTime: baseTime, roundTripLimit: tuning.roundTripLimit,
                      minimumUpdateInterval: tuning.minimumUpdateInterval, pollInterval: tuning.pollInterval,
                      calibrationWindow: tuning.calibrationWindow)
        if tuning.adaptsRoundTripLimit { adaptRoundTripLimit(.init(ceiling: tuning.roundTripLimit)) }
    }

    /// Lets `policy` set `roundTripLimit` from the exchanges from now on (`RoundTripLimitPolicy`); once per clock.
    public func adaptRoundTripLimit(_ parameters: RoundTripLimitPolicy.Parameters) {
        let limiter = RoundTripLimiter(clock: self, parameters: parameters)
        let previous = self.limiter.withLock { current in
            defer { current = limiter }
            return current
        }
        previous?.stop()
    }

    /// The adaptive limit's last choice; nil when the limit is fixed.
    public var adaptiveRoundTripLimit: Duration? { limiter.withLock { $0 }?.limit }

    deinit {
        limiter.withLock { $0 }?.stop()
        syncedConnection = nil
        // Detach the bus first so the polling thread stops posting to it, then drop the handler (its destroy
        // notify releases the observer's retain) and our bus reference.
        var value = GValue()
        g_value_init(&value, gst_bus_get_type())
        g_object_set_property(gobject, "bus", &value)
        g_value_unset(&value)
        gst_bus_set_sync_handler(statisticsBus, nil, nil, nil)
        gst_object_unref(statisticsBus)
        observer.finish()
    }

    /// True once the clock has synchronised to the provider (`gst_clock_is_synced`).
    public var isSynchronised: Bool { gst_clock_is_synced(clock) != 0 }

    /// Waits (without blocking a thread) until the clock synchronises; throws `notSynchronised` after
    /// `timeout`, `CancellationError` when the task is cancelled. GStreamer calls a clock synchronised after
    /// its first accepted exchange; on a busy machine that one exchange can be a few ms off (loopback at load
    /// 18: up to 5 ms; behind the relay up to 4-6 ms in the first 2 s). Callers that align media right away
    /// should also let `statistics()` deliver some ten more accepted observations (~200 ms at 20 ms polls).
    public func waitForSync(timeout: Duration) async throws {
        let (address, port) = (self.address, self.port)
        try await observer.waitForSync(isSynchronised: { [self] in isSynchronised }, timeout: timeout) {
            NetClockError.notSynchronised(address: address, port: port, timeout: timeout)
        }
    }

    /// Observations with an RTT above this are discarded (GStreamer then waits 250 ms before its next poll).
    /// The GStreamer default (1 s) lets a stalled exchange through; 200 ms rejects those yet keeps every exchange
    /// of ordinary WAN links, and is the ceiling of the adaptive limit (`RoundTripLimitPolicy`, on in
    /// `NetClockTuning.standard`), which then sets this property itself. The clock also drops exchanges slower
    /// than twice the median of its last 9 and twice its running average RTT by itself.
    public var roundTripLimit: Duration {
        get { .nanoseconds(Int64((try? get("round-trip-limit", as: Int.self)) ?? 0)) }
        set { setDuration("round-trip-limit", newValue) }
    }

    /// The shortest time between two polls when the round trip is shorter than this (GStreamer's default 50 ms);
    /// 5 ms lets `pollInterval` be 5 ms on loopback and LANs too (`NetClockTuning`).
    public var minimumUpdateInterval: Duration {
        get { .nanoseconds(Int64((try? get("minimum-update-interval", as: Int.self)) ?? 0)) }
        set { setDuration("minimum-update-interval", newValue) }
    }

    /// The clock that does the work (`internal-clock`): GStreamer keeps one per provider address and port in a
    /// process, shared by every client clock of that provider; its GstClock calibration properties tune the fit.
    private var internalClock: Clock {
        var value = GValue()
        g_value_init(&value, gst_clock_get_type())
        defer { g_value_unset(&value) }
        g_object_get_property(gobject, "internal-clock", &value)
        guard let raw = g_value_get_object(&value) else { preconditionFailure("GstNetClientClock has no internal clock") }
        return Clock(borrowing: raw)
    }

    /// How long after an answer (or a request left unanswered) the next request goes out (the internal clock's
    /// GstClock "timeout"; GStreamer's default 100 ms); a round trip longer than this has several requests in
    /// flight. Faster polls fill the regression window sooner: with a jittery link each exchange's offset is off
    /// by half the path asymmetry (up to ±5 ms behind the bench's relay), and only many bring the error under a
    /// millisecond (`NetClockTuning`).
    public var pollInterval: Duration {
        get { .nanoseconds(Int64((try? internalClock.get("timeout", as: Int.self)) ?? 0)) }
        set {
            do { try internalClock.set("timeout", Int(max(.zero, newValue).nanosecondsValue)) }
            catch { preconditionFailure("GstClock 'timeout': \(error)") }
        }
    }

    /// How many observations the calibration's linear regression spans (GstClock "window-size", default 32,
    /// at most 1024): a longer window averages more of a jittery link's noise away but follows rate changes, and
    /// forgets a burst of bad exchanges, more slowly (1024 at ~150 exchanges a second: ~7 s; `NetClockTuning`).
    /// Setting it restarts the calibration. Like `pollInterval` it belongs to the internal clock, shared by every
    /// client clock of the same provider in this process: the last value set wins.
    public var calibrationWindow: Int {
        get { (try? internalClock.get("window-size", as: Int.self)) ?? 0 }
        set {
            do { try internalClock.set("window-size", newValue) }
            catch { preconditionFailure("GstClock 'window-size': \(error)") }
        }
    }

    /// The most recent statistics observation, nil before the first exchange.
    public var latestStatistics: NetClockStatistics? { observer.latest }

    /// Every statistics observation from now on (one stream per call; it ends when the clock is released).
    public func statistics() -> AsyncStream<NetClockStatistics> { observer.subscribe() }

    private func setDuration(_ name: String, _ value: Duration) {
        do { try set(name, Int(max(.zero, value).nanosecondsValue)) }
        catch { preconditionFailure("GstNetClientClock '\(name)': \(error)") }
    }
}

/// `GstPtpClock`: a clock slaved to a PTP (IEEE 1588) grandmaster on `domain`. Needs `gst-ptp-helper`
/// (setuid/capabilities, or root) to bind ports 319/320.
public final class PtpClock: Clock, @unchecked Sendable {
    // Sendable: only the immutable domain number is stored besides the GObject (see ObjectRef).
    public let domain: UInt32

    /// Starts the PTP subsystem once per process (`gst_ptp_init` on all interfaces); false when the helper
    /// cannot run.
    public static func initialize() -> Bool {
        GStreamer.ensureInitialized()
        if gst_ptp_is_initialized() != 0 { return true }
        return gst_ptp_init(guint64.max, nil) != 0
    }

    public init(name: String = "ptp-clock", domain: UInt32) throws(NetClockError) {
        guard PtpClock.initialize(), let raw = gst_ptp_clock_new(name, guint(domain)) else {
            throw .ptpUnavailable(domain: domain)
        }
        self.domain = domain
        super.init(takingOwnershipOf: raw)
    }

    public var isSynchronised: Bool { gst_clock_is_synced(clock) != 0 }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue + attoseconds / 1_000_000_000
    }
}
