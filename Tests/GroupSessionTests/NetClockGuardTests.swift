import Coordination
import GStreamer
@testable import GroupSession
import Synchronization
import TestSupport
import XCTest

/// `NetClockGuard` alone, with a statistics stream the test feeds, coordinators without a medium behind fake targets
/// and a 200 ms silence limit: no clock, no socket, no pipeline; well under a second.
final class NetClockGuardTests: XCTestCase {
    private let reason = NetClockGuard.reason

    /// A value several tasks touch (the guard's report, the test).
    private final class Shared<Value: Sendable>: Sendable {
        private let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        var current: Value { value.withLock { $0 } }
        func update(_ change: @Sendable (inout Value) -> Void) { value.withLock { change(&$0) } }
    }

    private struct Watched {
        let guarded: NetClockGuard
        let coordinators: [PlaybackCoordinator]
        let statistics: AsyncStream<NetClockStatistics>.Continuation
        let lines: Shared<[String]>
    }

    /// `count` views guarded by a clock whose flag is `flag` (always up unless given), with the given limits.
    private func watch(_ count: Int, flag: Shared<Bool>? = nil, silenceLimit: Duration = .milliseconds(200),
                       flagLimit: Duration = NetClockGuard.flagLimit,
                       onFirstSuspension: (@Sendable (NetClockGuard) async -> Void)? = nil) async -> Watched {
        let coordinators = (1...count).map {
            PlaybackCoordinator(id: ParticipantID("view\($0)"), defaultIdentifier: "event",
                                target: NetworkMediumTests.RecordingTarget())
        }
        let (stream, continuation) = AsyncStream<NetClockStatistics>.makeStream()
        let lines = Shared<[String]>([])
        let up: @Sendable () -> Bool = { flag?.current ?? true }
        let guarded = NetClockGuard(statistics: { stream }, isSynchronised: up,
                                    status: { up() ? "net clock synced" : "net clock NOT synced" },
                                    silenceLimit: silenceLimit, flagLimit: flagLimit, coordinators: { coordinators },
                                    report: { line in lines.update { $0.append(line) } })
        if let onFirstSuspension {
            let events = await coordinators[0].events()
            Task {
                for await event in events {
                    if case .suspensionBegan = event { await onFirstSuspension(guarded); return }
                }
            }
        }
        guarded.start()
        return Watched(guarded: guarded, coordinators: coordinators, statistics: continuation, lines: lines)
    }

    private func reasons(_ coordinators: [PlaybackCoordinator]) async -> [[SuspensionReason]] {
        var all: [[SuspensionReason]] = []
        for coordinator in coordinators { all.append(await coordinator.suspensionReasons) }
        return all
    }

    private static let exchange = NetClockStatistics(synchronised: true, roundTrip: .microseconds(80),
                                                     roundTripAverage: .microseconds(80), discontinuity: .zero,
                                                     rSquared: 1, nextPoll: .milliseconds(5))

    private static func feed(_ statistics: AsyncStream<NetClockStatistics>.Continuation) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                statistics.yield(exchange)
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    func testASilentClockSuspendsEveryViewAndExchangesAgainEndTheSuspensions() async throws {
        let watched = await watch(2)
        let suspended = await eventually(timeout: .seconds(5)) {
            await self.reasons(watched.coordinators) == [[self.reason], [self.reason]]
        }
        let afterSilence = await reasons(watched.coordinators)
        XCTAssertTrue(suspended, "both views suspended after the silence: \(afterSilence)")
        XCTAssertTrue(watched.lines.current.contains { $0.contains("no answer from the host's net clock") },
                      "\(watched.lines.current)")

        // The clock answers again: an exchange every 10 ms, as a clock polling fast does.
        let feeder = Self.feed(watched.statistics)
        let back = await eventually(timeout: .seconds(5)) { await self.reasons(watched.coordinators) == [[], []] }
        feeder.cancel()
        let afterExchange = await reasons(watched.coordinators)
        XCTAssertTrue(back, "an exchange ended the suspensions: \(afterExchange)")
        XCTAssertTrue(watched.lines.current.contains { $0.contains("the views rejoin the group") })
        await watched.guarded.stop()
    }

    /// GStreamer's flag down for a moment (an answer that came out of order behind a jittery link) suspends no
    /// view (150 ms against a 1 s limit: a starved test thread may oversleep a lot before it fails); down for longer
    /// than `flagLimit` it suspends them all, and up again it ends the suspensions. The
    /// exchanges keep coming throughout (the silence limit plays no part).
    func testOnlyAFlagThatStaysDownSuspendsTheViews() async throws {
        let flag = Shared(true)
        let watched = await watch(2, flag: flag, silenceLimit: .seconds(5), flagLimit: .seconds(1))
        let coordinators = watched.coordinators, lines = watched.lines
        let feeder = Self.feed(watched.statistics)
        defer { feeder.cancel() }

        flag.update { $0 = false }
        try await Task.sleep(for: .milliseconds(150))
        flag.update { $0 = true }
        try await Task.sleep(for: .milliseconds(1_200))
        let afterBlip = await reasons(coordinators)
        XCTAssertEqual(afterBlip, [[], []], "a flag down for 150 ms suspends nothing: \(lines.current)")
        XCTAssertEqual(lines.current, [])

        flag.update { $0 = false }
        let suspended = await eventually(timeout: .seconds(3)) { await self.reasons(coordinators) == [[self.reason], [self.reason]] }
        XCTAssertTrue(suspended, "a flag that stays down suspends both views: \(lines.current)")
        XCTAssertTrue(lines.current.contains { $0.contains("net clock NOT synced: the views play on their own") }, "\(lines.current)")
        flag.update { $0 = true }
        let back = await eventually(timeout: .seconds(3)) { await self.reasons(coordinators) == [[], []] }
        XCTAssertTrue(back, "the flag up again ends the suspensions: \(lines.current)")
        await watched.guarded.stop()
    }

    /// `MemberSession` stops the old link's guard between two media, then joins the views to the new one: a
    /// suspension the guard was still making then (one view suspended, the next one not yet) must be ended too,
    /// or that view ignores its join's catch-up.
    func testStopWaitsForASuspensionUnderWayAndLeavesNoneHeld() async throws {
        let stopped = Shared(false)
        let watched = await watch(3) { guarded in
            await guarded.stop()
            stopped.update { $0 = true }
        }
        let done = await eventually(timeout: .seconds(5)) { stopped.current }
        XCTAssertTrue(done, "the guard suspended a view and was stopped meanwhile")
        let left = await reasons(watched.coordinators)
        XCTAssertEqual(left, [[], [], []], "no view is left suspended once stop() returned")
        XCTAssertEqual(watched.lines.current.filter { $0.contains("no answer") }.count, 1,
                       "one suspension of the views, made whole before the stop: \(watched.lines.current)")
        watched.statistics.finish()
    }
}
