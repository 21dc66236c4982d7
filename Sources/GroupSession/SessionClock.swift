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

    /// Follows the host's clock and waits until it is synchronised. A provider bound to every interface
    /// ("0.0.0.0") is reached at the address the member dialled for the session. Throws
    /// `NetClockError.notSynchronised` after `timeout`.
    public static func follow(_ announced: WireClockAddress, sessionHost: String,
                              timeout: Duration = .seconds(5)) async throws -> NetClientClock {
        let host = ["0.0.0.0", "::", ""].contains(announced.host) ? sessionHost : announced.host
        let clock = try NetClientClock(name: "group-session-clock", address: host, port: UInt16(clamping: announced.port))
        try await clock.waitForSync(timeout: timeout)
        return clock
    }

    /// One line for the status: synchronised or not, and the last round trip.
    public static func statusLabel(_ clock: NetClientClock) -> String {
        guard let statistics = clock.latestStatistics else { return "net clock: no exchange yet" }
        let rtt = Double(statistics.roundTrip.components.attoseconds) / 1e15 + Double(statistics.roundTrip.components.seconds) * 1000
        return String(format: "net clock %@, RTT %.2f ms", clock.isSynchronised ? "synced" : "NOT synced", rtt)
    }
}
