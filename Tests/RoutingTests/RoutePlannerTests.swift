import XCTest
@testable import Routing

/// The route plan, pure: no daemon, no pipeline. Each plan is also carried out on a model of the server, step by
/// step, to check that a non-mixable route never holds two of our streams and that the result is settled (a second
/// plan has nothing left to do).
final class RoutePlannerTests: XCTestCase {
    private let route: UInt32 = 10, parking: UInt32 = 20, other: UInt32 = 30

    private func situation(preferred: Int? = nil, live: Set<Int> = [1, 2, 3], ended: Set<Int> = [],
                           nonMixable: Bool = true, routePresent: Bool = true, parked: Bool = true,
                           _ streams: [RoutedStream]) -> RouteSituation {
        RouteSituation(preferredAudio: preferred, liveViews: live, endedViews: ended, routeSink: "living",
                       routeSinkIndex: routePresent ? route : nil, routeIsNonMixable: nonMixable,
                       parkingSink: parked ? ParkingSink(name: "parked", index: parking) : nil, streams: streams)
    }

    private func stream(_ view: Int, on sink: UInt32, muted: Bool = false, index: UInt32? = nil) -> RoutedStream {
        RoutedStream(sinkInput: index ?? UInt32(100 + view), view: view, sink: sink, muted: muted)
    }

    /// Carries the steps out on the streams; returns the result and the most streams on the route after any step.
    private func carryOut(_ plan: RoutePlan, in s: RouteSituation) -> (streams: [RoutedStream], mostOnRoute: Int) {
        var streams = s.streams
        var most = streams.filter { $0.sink == s.routeSinkIndex }.count
        for step in plan.steps {
            switch step {
            case .mute(let input, _): streams.indices.filter { streams[$0].sinkInput == input }.forEach { streams[$0].muted = true }
            case .unmute(let input, _): streams.indices.filter { streams[$0].sinkInput == input }.forEach { streams[$0].muted = false }
            case .moveToParking(let input, _, let sink):
                XCTAssertEqual(sink, s.parkingSink?.name)
                streams.indices.filter { streams[$0].sinkInput == input }.forEach { streams[$0].sink = s.parkingSink!.index }
            case .moveToRoute(let input, _, let sink):
                XCTAssertEqual(sink, s.routeSink)
                streams.indices.filter { streams[$0].sinkInput == input }.forEach { streams[$0].sink = s.routeSinkIndex! }
            }
            most = max(most, streams.filter { $0.sink == s.routeSinkIndex }.count)
        }
        return (streams, most)
    }

    /// Plans, carries out, checks the invariant and that the server is then settled; returns the plan.
    @discardableResult
    private func settle(_ s: RouteSituation, file: StaticString = #filePath, line: UInt = #line) -> RoutePlan {
        let plan = RoutePlanner.plan(s)
        let (after, most) = carryOut(plan, in: s)
        if s.routeIsNonMixable {
            XCTAssertLessThanOrEqual(most, max(1, s.streams.filter { $0.sink == s.routeSinkIndex }.count),
                                     "never more of our streams on the non-mixable route than before", file: file, line: line)
            XCTAssertLessThanOrEqual(after.filter { $0.sink == s.routeSinkIndex }.count, 1, file: file, line: line)
        }
        var next = s
        next.streams = after
        XCTAssertEqual(RoutePlanner.plan(next).steps, [], "a second plan has nothing left to do", file: file, line: line)
        return plan
    }

    func testStreamsStartingParkedOnlyTheOwnerGoesToTheRouteTheOthersAreMuted() {
        let plan = settle(situation(preferred: 2, [stream(1, on: parking), stream(2, on: parking), stream(3, on: parking)]))
        XCTAssertEqual(plan.owner, 2)
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 101, view: 1), .mute(sinkInput: 103, view: 3),
                                    .moveToRoute(sinkInput: 102, view: 2, sink: "living")])
        XCTAssertEqual(plan.suppressed, [1: true, 2: false, 3: true])
        XCTAssertNil(plan.problem)
    }

    func testASwapTakesTheOldOwnerOutBeforeTheNewOneComesIn() {
        let s = situation(preferred: 3, [stream(1, on: parking, muted: true), stream(2, on: route),
                                         stream(3, on: parking, muted: true)])
        let plan = settle(s)
        XCTAssertEqual(plan.owner, 3)
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 102, view: 2), .moveToParking(sinkInput: 102, view: 2, sink: "parked"),
                                    .unmute(sinkInput: 103, view: 3), .moveToRoute(sinkInput: 103, view: 3, sink: "living")],
                       "mute, park, then unmute while parked, then move in")
        XCTAssertEqual(plan.suppressed, [1: true, 2: true, 3: false])
    }

    func testWithoutAPreferenceTheFirstLiveViewOwnsTheRoute() {
        XCTAssertEqual(settle(situation([stream(2, on: parking), stream(3, on: parking)])).owner, 1,
                       "view 1 is live: it owns the route even before its stream appears")
        XCTAssertEqual(RoutePlanner.nonMixableOwner(preferred: nil, liveViews: [3, 2], endedViews: []), 2)
        XCTAssertEqual(RoutePlanner.nonMixableOwner(preferred: nil, liveViews: [], endedViews: []), nil)
        XCTAssertEqual(RoutePlanner.nonMixableOwner(preferred: 4, liveViews: [1], endedViews: []), 4,
                       "a preferred view the stage has not attached yet already owns the route")
    }

    func testAViewEndingHandsTheRouteToTheFirstLiveView() {
        let s = situation(preferred: 2, live: [1, 3], ended: [2],
                          [stream(1, on: parking, muted: true), stream(2, on: route), stream(3, on: parking, muted: true)])
        let plan = settle(s)
        XCTAssertEqual(plan.owner, 1)
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 102, view: 2), .moveToParking(sinkInput: 102, view: 2, sink: "parked"),
                                    .unmute(sinkInput: 101, view: 1), .moveToRoute(sinkInput: 101, view: 1, sink: "living")])
        XCTAssertEqual(plan.suppressed, [1: false, 2: true, 3: true])
    }

    func testTheOwnersStreamVanishingLeavesTheRouteEmptyAndTheOthersParked() {
        let plan = settle(situation(preferred: 2, [stream(1, on: parking, muted: true), stream(3, on: route)]))
        XCTAssertEqual(plan.owner, 2)
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 103, view: 3), .moveToParking(sinkInput: 103, view: 3, sink: "parked")],
                       "a stream that is not the owner's leaves even when the owner has none")
        XCTAssertEqual(plan.suppressed, [1: true, 3: true])
    }

    func testAStreamAppearingLateIsPlacedWhenItComes() {
        // Views 1 and 3 settled; view 2 (the owner) and then view 4 (not) open their streams on the parking sink.
        let owner = settle(situation(preferred: 2, live: [1, 2, 3, 4],
                                     [stream(1, on: parking, muted: true), stream(3, on: parking, muted: true),
                                      stream(2, on: parking)]))
        XCTAssertEqual(owner.steps, [.moveToRoute(sinkInput: 102, view: 2, sink: "living")])
        let other = settle(situation(preferred: 2, live: [1, 2, 3, 4],
                                     [stream(1, on: parking, muted: true), stream(2, on: route),
                                      stream(3, on: parking, muted: true), stream(4, on: parking)]))
        XCTAssertEqual(other.steps, [.mute(sinkInput: 104, view: 4)], "a late non-owner is muted where it starts")
        XCTAssertEqual(other.suppressed[4], true)
    }

    func testAMixableRouteTakesEveryStreamUnmuted() {
        let plan = settle(situation(preferred: 2, nonMixable: false, parked: false,
                                    [stream(1, on: parking, muted: true), stream(2, on: route), stream(3, on: other)]))
        XCTAssertNil(plan.owner)
        XCTAssertEqual(plan.steps, [.moveToRoute(sinkInput: 101, view: 1, sink: "living"), .unmute(sinkInput: 101, view: 1),
                                    .moveToRoute(sinkInput: 103, view: 3, sink: "living")])
        XCTAssertEqual(plan.suppressed, [1: false, 2: false, 3: false])
    }

    func testTheRouteSinkRemovedPlansNothing() {
        let plan = RoutePlanner.plan(situation(preferred: 2, routePresent: false, [stream(1, on: other), stream(2, on: other)]))
        XCTAssertEqual(plan.problem, .routeSinkMissing)
        XCTAssertEqual(plan.steps, [])
        XCTAssertEqual(plan.owner, 2)
    }

    func testWithoutAParkingSinkALeavingStreamIsMutedAndTheOwnerWaits() {
        let plan = RoutePlanner.plan(situation(preferred: 3, parked: false,
                                               [stream(2, on: route), stream(3, on: other, muted: true)]))
        XCTAssertEqual(plan.problem, .noParkingSink)
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 102, view: 2)], "view 3 must not join view 2 on the route")
        XCTAssertEqual(plan.suppressed, [2: true])
    }

    func testAnOwnerOnAnotherSinkIsMovedBeforeItIsUnmuted() {
        let plan = settle(situation(preferred: 1, [stream(1, on: other, muted: true)]))
        XCTAssertEqual(plan.steps, [.moveToRoute(sinkInput: 101, view: 1, sink: "living"), .unmute(sinkInput: 101, view: 1)],
                       "never unmuted where it would be heard on another sink")
    }

    func testAViewWithTwoStreamsEntersWithTheNewestOnly() {
        let plan = settle(situation(preferred: 1, [stream(1, on: route, index: 101), stream(1, on: parking, index: 140)]))
        XCTAssertEqual(plan.steps, [.mute(sinkInput: 101, view: 1), .moveToParking(sinkInput: 101, view: 1, sink: "parked"),
                                    .moveToRoute(sinkInput: 140, view: 1, sink: "living")])
        XCTAssertEqual(plan.suppressed, [1: false])
    }

    /// Any placement of up to five streams over three sinks, any preference: the invariant holds at every step and
    /// one plan settles the server.
    func testEveryPlacementSettlesInOnePlanWithoutTwoStreamsOnTheRoute() {
        var rng = SplitMix(seed: 13)
        for _ in 0..<2000 {
            let count = Int(rng.next() % 6)
            let sinks = [route, parking, other]
            var streams: [RoutedStream] = []
            var onRoute = false
            for view in 1...max(1, count) where count > 0 {
                var sink = sinks[Int(rng.next() % 3)]
                if sink == route { if onRoute { sink = parking } else { onRoute = true } }   // a settled start: ≤ 1 there
                streams.append(stream(view, on: sink, muted: rng.next() % 2 == 0))
            }
            let live = Set(1...5).filter { _ in rng.next() % 4 != 0 }
            let preferred = rng.next() % 3 == 0 ? nil : Int(rng.next() % 6) + 1
            let s = situation(preferred: preferred, live: live, ended: Set(1...5).subtracting(live),
                              nonMixable: rng.next() % 4 != 0, streams)
            let plan = settle(s)
            if s.routeIsNonMixable, let owner = plan.owner, s.streams.contains(where: { $0.view == owner }) {
                XCTAssertEqual(plan.suppressed[owner], false)
            }
        }
    }

    func testTheExternalDisplayOwnerSkipsEndedAndLocalOnlyViews() {
        XCTAssertEqual(RoutePlanner.externalOwner(preferred: 2, liveViews: [1, 2], endedViews: [], localOnly: []), 2)
        XCTAssertEqual(RoutePlanner.externalOwner(preferred: 2, liveViews: [1, 3], endedViews: [2], localOnly: []), 1)
        XCTAssertEqual(RoutePlanner.externalOwner(preferred: 1, liveViews: [1, 3], endedViews: [], localOnly: [1]), 3)
        XCTAssertEqual(RoutePlanner.externalOwner(preferred: nil, liveViews: [1], endedViews: [], localOnly: [1]), nil)
    }
}

/// A small seeded generator (SplitMix64), so the placement sweep is the same every run.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
