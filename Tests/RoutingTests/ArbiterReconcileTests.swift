import Foundation
import Multiview
import Synchronization
import TestSupport
import XCTest
@testable import Routing

/// The arbiter's reconcile loop against `FakePulseServer`: no daemon, no pipeline, milliseconds. Views are attached
/// by identity; their streams appear when the test adds them (as a player's pulsesink would open them).
final class ArbiterReconcileTests: XCTestCase {
    private var living = "living"

    private func arbiter(_ configuration: RoutingConfiguration, _ server: FakePulseServer) -> RoutingArbiter {
        RoutingArbiter(configuration: configuration, connect: { () async throws(PulseAudioError) -> any PulseAudioServer in server },
                       reconnectInterval: .milliseconds(5))
    }

    /// A started arbiter on a non-mixable `living` route with views 1...count attached and their streams placed.
    private func settled(preferred: Int?, count: Int = 3) async throws -> (RoutingArbiter, FakePulseServer, [Int: UInt32]) {
        let server = FakePulseServer()
        server.addSink(living, nonMixable: true)
        let arbiter = arbiter(RoutingConfiguration(audioRoute: living, preferredAudio: preferred), server)
        try await arbiter.start()
        var streams: [Int: UInt32] = [:]
        for n in 1...count {
            await arbiter.attach(view: ViewIdentity(number: n, name: "v\(n)"), externalVideo: { _ in })
            streams[n] = try await addStream(n, arbiter, server)
        }
        await arbiter.reconcile()
        return (arbiter, server, streams)
    }

    /// The view's stream opens where `configure` told its player to open it.
    private func addStream(_ n: Int, _ arbiter: RoutingArbiter, _ server: FakePulseServer) async throws -> UInt32 {
        let configured = await arbiter.configure(PlayerConfiguration(view: ViewIdentity(number: n, name: "v\(n)"),
                                                                     audio: .pulse(device: nil)))
        guard case .pulse(let device?) = configured.audio else { throw TestFailure("view \(n) got no device: \(configured.audio)") }
        XCTAssertEqual(configured.audioStreamProperties[RoutingArbiter.instanceProperty], arbiter.instance)
        return server.addStream(view: n, instance: arbiter.instance, on: device)
    }

    private func changes(_ calls: ArraySlice<FakePulseServer.Call>) -> [FakePulseServer.Call] {
        calls.filter { if case .move = $0 { return true }; if case .mute = $0 { return true }; return false }
    }

    func testStreamsStartParkedAndOnlyThePreferredViewReachesTheNonMixableRoute() async throws {
        let (arbiter, server, _) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        XCTAssertTrue(server.sinkNames.contains(parked), "the parking sink was loaded: \(server.sinkNames)")
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [2])
        XCTAssertEqual(server.views(on: parked, instance: arbiter.instance), [1, 3])
        XCTAssertEqual(server.isMuted(view: 1), true)
        XCTAssertEqual(server.isMuted(view: 2), false)
        let flags = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertEqual(flags, [1: true, 2: false, 3: true])
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.nonMixableAudioOwner(view: 2, route: living, byDefault: false)), "\(events)")
        XCTAssertEqual(server.mostOnNonMixable, 1)
        await arbiter.shutdown()
        XCTAssertFalse(server.sinkNames.contains(parked), "shutdown unloads the parking sink")
    }

    func testASwapMutesAndParksTheOldOwnerBeforeTheNewOneComesIn() async throws {
        let (arbiter, server, s) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        let mark = server.calls.count
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        XCTAssertEqual(changes(server.calls[mark...]), [.mute(s[2]!, true), .move(s[2]!, parked), .mute(s[3]!, false),
                                                        .move(s[3]!, living)])
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [3])
        let flags = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertEqual(flags, [1: true, 2: true, 3: false])
        XCTAssertEqual(server.mostOnNonMixable, 1)
        await arbiter.shutdown()
    }

    func testAPreferenceChangedWhileASwapIsUnderWayWaitsForItAndNeverSharesTheRoute() async throws {
        let (arbiter, server, s) = try await settled(preferred: 1)
        let asked = Mutex(false)
        // When the swap to view 3 has begun (view 1 being muted), `audio 2` arrives; that request takes a while to
        // answer, so a second pass, if the arbiter ran one alongside, would plan from the half-swapped server.
        server.onCall { call in
            guard call == .mute(s[1]!, true), asked.withLock({ done in let first = !done; done = true; return first }) else { return }
            Task { await arbiter.setPreferredParticipantForNonMixableAudioRoutes(2) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        let last = await eventually {
            let preferred = await arbiter.preferredParticipantForNonMixableAudioRoutes
            await arbiter.reconcile()
            return preferred == 2 && server.views(on: self.living, instance: arbiter.instance) == [2]
        }
        XCTAssertTrue(last, "the later request wins: \(server.views(on: living, instance: arbiter.instance))")
        XCTAssertEqual(server.mostOnNonMixable, 1, "never two of our streams on the non-mixable route")
        await arbiter.shutdown()
    }

    func testManySwapsRequestedTogetherEndWithTheLastPreferenceAlone() async throws {
        let (arbiter, server, _) = try await settled(preferred: 1, count: 4)
        server.onCall { _ in try? await Task.sleep(for: .milliseconds(1)) }
        await withTaskGroup(of: Void.self) { group in
            for view in [3, 2, 4, 1, 3, 4, 2] {
                group.addTask { await arbiter.setPreferredParticipantForNonMixableAudioRoutes(view) }
            }
        }
        await arbiter.reconcile()
        let preferred = await arbiter.preferredParticipantForNonMixableAudioRoutes
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [preferred!])
        XCTAssertEqual(server.mostOnNonMixable, 1, "never two of our streams on the non-mixable route")
        await arbiter.shutdown()
    }

    func testAViewEndingResetsItsPreferenceAndTheFirstLiveViewTakesOver() async throws {
        let (arbiter, server, _) = try await settled(preferred: 2)
        await arbiter.viewEnded(2)
        let preferred = await arbiter.preferredParticipantForNonMixableAudioRoutes
        XCTAssertNil(preferred)
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [1])
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.preferenceReset(view: 2, external: false)))
        XCTAssertTrue(events.contains(.nonMixableAudioOwner(view: 1, route: living, byDefault: true)), "\(events)")
        await arbiter.shutdown()
    }

    func testTheOldOwnersStreamVanishingMidSwapStillEndsWithTheNewOwnerAlone() async throws {
        let (arbiter, server, s) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        let leaving = s[2]!
        server.onCall { call in if call == .move(leaving, parked) { server.removeStream(leaving) } }
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        await arbiter.reconcile()
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [3])
        XCTAssertEqual(server.mostOnNonMixable, 1)
        let events = await arbiter.pastEvents
        XCTAssertFalse(events.contains { if case .failed = $0 { return true } else { return false } },
                       "a stream that ended under the plan is not a failure: \(events)")
        await arbiter.shutdown()
    }

    func testAFailedMoveIsATypedEventAndTheNewOwnerStaysOutUntilTheRouteIsClear() async throws {
        let (arbiter, server, s) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        let refused = PulseAudioError.failed(.move(sinkInput: s[2]!, sink: parked), .accessDenied)
        server.fail({ $0 == .move(s[2]!, parked) }, with: refused, times: .max)
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        await arbiter.reconcile()   // passes caused by the mute's event meet the same refusal
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.failed(.pulseAudio(refused))), "\(events)")
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [2], "view 3 did not join view 2 there")
        XCTAssertEqual(server.isMuted(view: 2), true, "the old owner was muted before its move failed")
        server.clearFailures()
        await arbiter.reconcile()
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [3], "the next pass completes the swap")
        XCTAssertEqual(server.mostOnNonMixable, 1)
        await arbiter.shutdown()
    }

    func testAMixableRouteTakesEveryViewUnmuted() async throws {
        let server = FakePulseServer()
        server.addSink("speakers")
        let arbiter = arbiter(RoutingConfiguration(audioRoute: "speakers", preferredAudio: 2), server)
        try await arbiter.start()
        for n in 1...3 {
            await arbiter.attach(view: ViewIdentity(number: n, name: "v\(n)"), externalVideo: { _ in })
            _ = try await addStream(n, arbiter, server)
        }
        await arbiter.reconcile()
        XCTAssertEqual(server.views(on: "speakers", instance: arbiter.instance), [1, 2, 3])
        XCTAssertFalse(server.calls.contains(.load("module-null-sink")), "no parking sink for a mixable route")
        let flags = await arbiter.audioOutputSuppressedDueToNonMixableAudioRoute
        XCTAssertFalse(flags.values.contains(true))
        await arbiter.shutdown()
    }

    func testRemovingTheRouteSinkFallsBackToTheDefaultSink() async throws {
        let server = FakePulseServer()
        server.addSink("den")
        let arbiter = arbiter(RoutingConfiguration(audioRoute: "den"), server)
        try await arbiter.start()
        await arbiter.attach(view: ViewIdentity(number: 1, name: "v1"), externalVideo: { _ in })
        _ = try await addStream(1, arbiter, server)
        await arbiter.reconcile()
        XCTAssertEqual(server.views(on: "den", instance: arbiter.instance), [1])
        server.removeSink("den")
        let fell = await eventually { await arbiter.currentRoute?.sinkName == "default_sink" }
        XCTAssertTrue(fell)
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.routeLost(sink: "den", fallback: "default_sink")), "\(events)")
        XCTAssertEqual(server.views(on: "default_sink", instance: arbiter.instance), [1])
        await arbiter.shutdown()
    }

    func testAParkingSinkUnloadedBySomeoneElseIsLoadedAgain() async throws {
        let (arbiter, server, _) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        server.removeSink(parked)   // its streams fall to the default sink
        let back = await eventually { server.views(on: parked, instance: arbiter.instance) == [1, 3] }
        XCTAssertTrue(back, "views 1 and 3 parked again on a new parking sink: \(server.sinkNames)")
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [2])
        XCTAssertEqual(server.isMuted(view: 1), true)
        await arbiter.shutdown()
    }

    func testWhenTheParkingSinkCannotBeLoadedAgainTheOthersStayMutedAndTheOwnerAlone() async throws {
        let (arbiter, server, _) = try await settled(preferred: 2)
        let parked = await arbiter.parkingSinkName
        let refusal = PulseAudioError.failed(.loadModule(name: "module-null-sink", arguments: ""), .moduleInitFailed)
        server.fail({ if case .load = $0 { return true } else { return false } }, with: refusal, times: .max)
        server.removeSink(parked)   // views 1 and 3 fall to the default sink, still muted
        let reported = await eventually { await arbiter.pastEvents.contains(.failed(.pulseAudio(refusal))) }
        XCTAssertTrue(reported, "the failed reload is one typed event")
        await arbiter.setPreferredParticipantForNonMixableAudioRoutes(3)
        await arbiter.reconcile()
        XCTAssertEqual(server.views(on: living, instance: arbiter.instance), [2],
                       "view 2 cannot leave without a parking sink, so view 3 stays out")
        XCTAssertEqual(server.isMuted(view: 2), true, "the leaving owner is muted where it is")
        XCTAssertEqual(server.isMuted(view: 1), true)
        XCTAssertEqual(server.mostOnNonMixable, 1)
        await arbiter.shutdown()
    }

    func testLosingTheServerIsReportedAndReconnectingPlacesTheNewStreams() async throws {
        let first = FakePulseServer(), second = FakePulseServer()
        for server in [first, second] { server.addSink(living, nonMixable: true) }
        let attempts = Mutex(0)
        let arbiter = RoutingArbiter(
            configuration: RoutingConfiguration(audioRoute: living, preferredAudio: 2),
            connect: { () async throws(PulseAudioError) -> any PulseAudioServer in
                let attempt = attempts.withLock { $0 += 1; return $0 }
                if attempt == 1 { return first }
                if attempt < 4 { throw .unreachable(.connectionRefused) }   // the daemon takes a moment to return
                return second
            }, reconnectInterval: .milliseconds(5))
        try await arbiter.start()
        for n in 1...2 {
            await arbiter.attach(view: ViewIdentity(number: n, name: "v\(n)"), externalVideo: { _ in })
            _ = try await addStream(n, arbiter, first)
        }
        await arbiter.reconcile()
        XCTAssertEqual(first.views(on: living, instance: arbiter.instance), [2])

        first.disconnect()
        let back = await eventually {
            let events = await arbiter.pastEvents, parking = await arbiter.parking
            return events.contains(.pulseAudioBack) && parking.name != nil
        }
        XCTAssertTrue(back, "reconnected, route picked and parking sink loaded")
        let events = await arbiter.pastEvents
        XCTAssertTrue(events.contains(.pulseAudioUnavailable(.disconnected)), "\(events)")
        XCTAssertEqual(attempts.withLock { $0 }, 4, "reconnected after two refusals")
        let route = await arbiter.currentRoute
        XCTAssertEqual(route?.sinkName, living)
        // The players open new streams on the returned server, where they are placed again.
        for n in 1...2 { _ = try await addStream(n, arbiter, second) }
        await arbiter.reconcile()
        XCTAssertEqual(second.views(on: living, instance: arbiter.instance), [2])
        XCTAssertEqual(second.isMuted(view: 1), true)
        XCTAssertEqual(second.mostOnNonMixable, 1)
        await arbiter.shutdown()
    }

    func testWithoutPulseAudioTheViewsPlayUnroutedAfterOneEvent() async throws {
        let arbiter = RoutingArbiter(configuration: RoutingConfiguration(audioRoute: living),
                                     connect: { () async throws(PulseAudioError) -> any PulseAudioServer in
                                         throw .unreachable(.connectionRefused)
                                     })
        try await arbiter.start()
        let events = await arbiter.pastEvents
        XCTAssertEqual(events, [.pulseAudioUnavailable(.unreachable(.connectionRefused))])
        XCTAssertEqual(events.first?.description,
                       "audio routing disabled: PulseAudio is not reachable: connection refused; video keeps playing")
        let has = await arbiter.hasPulseAudio
        XCTAssertFalse(has)
        let configured = await arbiter.configure(PlayerConfiguration(view: ViewIdentity(number: 1, name: "v1"),
                                                                     audio: .pulse(device: nil)))
        XCTAssertEqual(configured.audio, .pulse(device: nil))
        XCTAssertNil(configured.audioStreamProperties[RoutingArbiter.instanceProperty])
        await arbiter.shutdown()
    }

    func testAnUnknownRouteIsATypedErrorAndTheDefaultSinkServesInstead() async throws {
        let server = FakePulseServer()
        let arbiter = arbiter(RoutingConfiguration(audioRoute: "nope"), server)
        do throws(RoutingError) {
            try await arbiter.start()
            XCTFail("started on a sink that does not exist")
        } catch {
            XCTAssertEqual(error, .noSuchSink("nope", available: ["default_sink"]))
        }
        try await arbiter.start(useDefaultSink: true)
        let route = await arbiter.currentRoute
        XCTAssertEqual(route?.sinkName, "default_sink")
        XCTAssertEqual(route?.isDefault, true)
        await arbiter.shutdown()
    }
}
