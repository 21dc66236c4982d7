import Foundation
import GStreamer
import GroupProtocol

/// The group's one clock across processes: GStreamer's, not ours. The host serves its medium's clock (the
/// system clock every local pipeline runs on) with a `NetTimeProvider`; each member's pipelines run on a
/// `NetClientClock` following it, so a start instant C chosen on the host is the same instant on every member.
public enum SessionClock {
    /// Serves `clock` on UDP at `address` (the session's listen address), any free port.
    public static func serve(_ clock: Clock, address: String) throws -> NetTimeProvider {
        try NetTimeProvider(clock: clock, address: address, port: 0)
    }

    /// What the welcome announces for a provider: its address and port.
    public static func announcement(of provider: NetTimeProvider) -> WireClockAddress {
        WireClockAddress(host: provider.address, port: Int(provider.port))
    }

    /// A member's clock following the host's, and the watch that tells when it has settled.
    public struct Following: Sendable {
        public let clock: NetClientClock
        public let settlement: NetClockSettlement
    }

    /// Follows the host's clock and waits until it is synchronised (GStreamer's first accepted exchange); its
    /// settlement watches every exchange from the first on, so the views can wait for a settled clock before they
    /// join while they preroll. A provider bound to every interface ("0.0.0.0") is reached at the address the
    /// member dialled for the session; `tuning` sets the clock (`NetClockTuning`). Throws `NetClockError.notSynchronised` after `timeout`.
    public static func follow(_ announced: WireClockAddress, sessionHost: String, timeout: Duration = .seconds(5),
                              tuning: NetClockTuning = .standard,
                              settling: NetClockSettling.Criteria = .init()) async throws -> Following {
        let host = ["0.0.0.0", "::", ""].contains(announced.host) ? sessionHost : announced.host
        let clock = try NetClientClock(name: "group-session-clock", address: host, port: UInt16(clamping: announced.port),
                                       tuning: tuning)
        let settlement = NetClockSettlement(clock: clock, criteria: settling)
        try await clock.waitForSync(timeout: timeout)
        return Following(clock: clock, settlement: settlement)
    }

    /// "net clock settled after 24 exchanges (offsets within 0.21 ms)".
    public static func settledLabel(_ outcome: NetClockSettlement.Outcome) -> String {
        let spread = Double(outcome.spread.components.attoseconds) / 1e15 + Double(outcome.spread.components.seconds) * 1000
        return String(format: "net clock settled after %d exchanges (offsets within %.2f ms)", outcome.observed, spread)
    }

    /// What a link's bounded wait for a settled clock ended with, as one line: the settled label; "net clock not
    /// settled after 5 s (offsets within 1.84 ms over the last window, 40 of 212 exchanges accepted): the views
    /// join on it"; nil when the clock went away (its loss is reported where it is seen).
    public static func settledLabel(_ wait: NetClockSettlement.BoundedWait, limit: Duration) -> String? {
        switch wait {
        case .settled(let outcome):
            return settledLabel(outcome)
        case .notSettled(let spread, let accepted, let observed):
            let within = spread.map { String(format: "offsets within %.2f ms over the last window", milliseconds($0)) }
                ?? "no full window of accepted exchanges"
            return String(format: "net clock not settled after %.1f s (%@, %d of %d exchanges accepted): the views join on it",
                          milliseconds(limit) / 1000, within, accepted, observed)
        case .gone:
            return nil
        }
    }

    private static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    /// One line for the status: synchronised or not, and the last round trip.
    public static func statusLabel(_ clock: NetClientClock) -> String {
        guard let statistics = clock.latestStatistics else { return "net clock: no exchange yet" }
        let rtt = Double(statistics.roundTrip.components.attoseconds) / 1e15 + Double(statistics.roundTrip.components.seconds) * 1000
        return String(format: "net clock %@, RTT %.2f ms", clock.isSynchronised ? "synced" : "NOT synced", rtt)
    }
}
