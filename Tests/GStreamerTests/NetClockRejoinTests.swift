import CGStreamer
@testable import GStreamer
import XCTest

/// A second `NetClientClock` of a provider this process already follows — a group member's new link after its old
/// one was cut, while its views still run on the old link's clock — over loopback, with a real provider and real
/// client clocks (no pipeline, no daemon). GStreamer gives both client clocks one internal clock (one regression
/// window). Here the new link's exchanges disagree with the old link's by 1 ms: the provider serves a clock of the
/// test's own, moved 1 ms ahead while the link is down. (In `LinkFaultTests` the disagreement was a shift of the
/// exchanges' asymmetry, tens to hundreds of µs, against GStreamer's "synchronised" bound of a quarter of the
/// average round trip plus the exchange's own spread: tens of µs on a LAN.)
final class NetClockRejoinTests: XCTestCase {
    /// How many exchanges the old link's clock calibrates over before the cut (a member's window holds up to 1024).
    private static let oldExchanges = 300
    /// Fewer than `oldExchanges` do under load; below this the test would not tell a shared window from its own.
    private static let minimumOldExchanges = 150
    private static let shift = Duration.milliseconds(1)

    /// The new link's clock settles on its own exchanges, soon, at the provider's time as it is now — not after
    /// hundreds of exchanges have outweighed the old link's in a shared window.
    func testANewClientOfAProviderAlreadyFollowedCalibratesFromItsOwnExchanges() async throws {
        let served = Self.movableClock()
        let provider = try NetTimeProvider(clock: served, address: "127.0.0.1", port: 0)
        let old = try NetClientClock(name: "old-link", address: "127.0.0.1", port: provider.port, tuning: .standard)
        let oldObservations = old.statistics()
        try await old.waitForSync(timeout: .seconds(defaultTimeout))
        // Loopback runs ~20 exchanges a second on an idle machine, but GStreamer pauses 250 ms after each exchange
        // it discards, and under the suite's load far more are discarded (252 in 40 s, CI stop 23). What the test
        // needs is a window full enough that a shared one would outweigh the new link's exchanges for well over
        // the 50 the new clock may take: 150.
        let counted = await Self.count(Self.oldExchanges, of: oldObservations, within: .seconds(40))
        XCTAssertGreaterThanOrEqual(counted, Self.minimumOldExchanges,
                                    "the old link's clock kept exchanging (\(counted) in 40 s)")

        // The link is cut; the provider's time moves ahead; a new link makes a new client clock, then the link is back.
        provider.isActive = false
        try await Task.sleep(for: .milliseconds(300))
        Self.move(served, by: Self.shift)
        let new = try NetClientClock(name: "new-link", address: "127.0.0.1", port: provider.port, tuning: .standard)
        let settlement = NetClockSettlement(clock: new)
        provider.isActive = true

        let waiter = Task { await settlement.waitUntilSettled() }
        let deadline = Task {
            try await Task.sleep(for: .seconds(20))
            waiter.cancel()
        }
        defer { deadline.cancel() }
        let settled = await waiter.value
        let last = new.latestStatistics
        let outcome = try XCTUnwrap(settled, "the new link's clock did not settle within 20 s; last statistics: "
                                    + String(describing: last))
        print("new link's clock settled after \(outcome.observed) exchanges (\(outcome.accepted) synchronised)")
        // A fresh calibration settles after ~10-25 exchanges (4 to start the fit, 8 in a row within bounds; 12 here).
        XCTAssertLessThanOrEqual(outcome.observed, 50, "settled only after \(outcome.observed) exchanges (\(outcome))")
        let offset = try XCTUnwrap(last?.localClockOffset, "GStreamer 1.22 posts local-clock-offset")
        let error = offset - Self.shift
        XCTAssertLessThan(error < .zero ? .zero - error : error, .microseconds(300),
                          "the settled calibration follows the provider's time now (offset \(offset), provider \(Self.shift) ahead)")
        _ = old   // the old link's clock is still in use (its views move afterwards)
    }

    /// A clock of the test's own for the provider to serve: a private GstSystemClock (monotonic) whose calibration
    /// can move its time.
    private static func movableClock() -> Clock {
        GStreamer.ensureInitialized()
        guard let raw = g_object_new_with_properties(gst_system_clock_get_type(), 0, nil, nil) else {
            preconditionFailure("GstSystemClock cannot be instantiated")
        }
        return Clock(takingOwnershipOf: raw)
    }

    /// Moves `clock`'s time ahead by `offset` from now on.
    private static func move(_ clock: Clock, by offset: Duration) {
        let now = gst_clock_get_internal_time(clock.clock)
        let ahead = GstClockTime(offset.components.seconds * 1_000_000_000 + offset.components.attoseconds / 1_000_000_000)
        gst_clock_set_calibration(clock.clock, now, now + ahead, 1, 1)
    }

    /// Counts up to `wanted` statistics from `stream`, giving up after `limit`.
    private static func count(_ wanted: Int, of stream: AsyncStream<NetClockStatistics>, within limit: Duration) async -> Int {
        let counter = Task {
            var seen = 0
            for await _ in stream {
                seen += 1
                if seen == wanted || Task.isCancelled { break }
            }
            return seen
        }
        let deadline = Task {
            try await Task.sleep(for: limit)
            counter.cancel()
        }
        defer { deadline.cancel() }
        return await counter.value
    }
}
