/// The arbiter's decisions, pure: who owns a route and which mute/move steps bring the server there. No I/O and no
/// time: the inputs are the preferences, the views, the route, the parking sink and the server's view of our
/// streams; the output is a `RoutePlan` the arbiter carries out in order.

/// One of our playback streams as the server describes it (a sink input tagged with our instance and a view).
public struct RoutedStream: Sendable, Equatable {
    public var sinkInput: UInt32
    public var view: Int
    /// Index of the sink it plays to.
    public var sink: UInt32
    public var muted: Bool

    public init(sinkInput: UInt32, view: Int, sink: UInt32, muted: Bool) {
        self.sinkInput = sinkInput; self.view = view; self.sink = sink; self.muted = muted
    }
}

/// Everything a route plan depends on.
public struct RouteSituation: Sendable, Equatable {
    /// `preferredParticipantForNonMixableAudioRoutes` (nil: none, the first live view owns the route).
    public var preferredAudio: Int?
    /// Views attached and playing (not ended).
    public var liveViews: Set<Int>
    /// Views that ended or failed: they never own a route.
    public var endedViews: Set<Int>
    /// The route's sink by name, its index on the server (nil: the sink is gone), and whether it is mixable.
    public var routeSink: String
    public var routeSinkIndex: UInt32?
    public var routeIsNonMixable: Bool
    /// The silent sink suppressed streams wait on (nil: not loaded, or gone).
    public var parkingSink: ParkingSink?
    /// Our streams on the server.
    public var streams: [RoutedStream]

    public init(preferredAudio: Int? = nil, liveViews: Set<Int>, endedViews: Set<Int> = [], routeSink: String,
                routeSinkIndex: UInt32?, routeIsNonMixable: Bool, parkingSink: ParkingSink? = nil,
                streams: [RoutedStream]) {
        self.preferredAudio = preferredAudio; self.liveViews = liveViews; self.endedViews = endedViews
        self.routeSink = routeSink; self.routeSinkIndex = routeSinkIndex; self.routeIsNonMixable = routeIsNonMixable
        self.parkingSink = parkingSink; self.streams = streams
    }
}

/// The silent null sink the arbiter loads for streams held off a non-mixable route.
public struct ParkingSink: Sendable, Equatable {
    public var name: String
    public var index: UInt32
    public init(name: String, index: UInt32) { self.name = name; self.index = index }
}

/// One change on the server, in the order the plan lists them.
public enum RouteStep: Sendable, Equatable {
    case mute(sinkInput: UInt32, view: Int)
    case moveToParking(sinkInput: UInt32, view: Int, sink: String)
    case unmute(sinkInput: UInt32, view: Int)
    case moveToRoute(sinkInput: UInt32, view: Int, sink: String)

    public var view: Int {
        switch self {
        case .mute(_, let v), .moveToParking(_, let v, _), .unmute(_, let v), .moveToRoute(_, let v, _): return v
        }
    }
}

/// Why a plan could not bring the server all the way to the preferences.
public enum RoutePlanProblem: Sendable, Equatable {
    /// The route's sink is gone from the server (the arbiter falls back when the removal event arrives).
    case routeSinkMissing
    /// A stream must leave the non-mixable route but there is no parking sink: it is muted, and the owner waits.
    case noParkingSink
}

public struct RoutePlan: Sendable, Equatable {
    /// The view whose audio plays on the non-mixable route (nil on a mixable route, or when no view is live).
    public var owner: Int?
    /// Steps in order: every stream leaving the route is out before the owner's stream comes in.
    public var steps: [RouteStep]
    /// Per view with a stream: whether its audio is held off the route (`audioOutputSuppressedDueToNonMixableAudioRoute`).
    public var suppressed: [Int: Bool]
    public var problem: RoutePlanProblem?
}

public enum RoutePlanner {
    /// The owner of a non-mixable route: the preferred view unless it ended (a preferred view not attached yet —
    /// the stage is still making views — already owns it), else the first live view.
    public static func nonMixableOwner(preferred: Int?, liveViews: Set<Int>, endedViews: Set<Int>) -> Int? {
        if let preferred, !endedViews.contains(preferred) { return preferred }
        return liveViews.subtracting(endedViews).min()
    }

    /// The view on the external display: the preferred one unless it ended or is local-only, else the first live
    /// view allowed there.
    public static func externalOwner(preferred: Int?, liveViews: Set<Int>, endedViews: Set<Int>,
                                     localOnly: Set<Int>) -> Int? {
        if let preferred, !endedViews.contains(preferred), !localOnly.contains(preferred) { return preferred }
        return liveViews.subtracting(endedViews).subtracting(localOnly).min()
    }

    public static func plan(_ s: RouteSituation) -> RoutePlan {
        guard let routeIndex = s.routeSinkIndex else {
            let owner = s.routeIsNonMixable ? nonMixableOwner(preferred: s.preferredAudio, liveViews: s.liveViews, endedViews: s.endedViews) : nil
            return RoutePlan(owner: owner, steps: [], suppressed: [:], problem: .routeSinkMissing)
        }
        guard s.routeIsNonMixable else { return mixable(s, routeIndex) }
        let owner = nonMixableOwner(preferred: s.preferredAudio, liveViews: s.liveViews, endedViews: s.endedViews)
        // One stream per view may be on the route: a view with two (its player replacing its sink) enters with
        // the newest; the older one leaves with the others.
        let entering = s.streams.filter { $0.view == owner }.max { $0.sinkInput < $1.sinkInput }
        let leaving = s.streams.filter { $0.sinkInput != entering?.sinkInput }

        var steps: [RouteStep] = []
        var suppressed: [Int: Bool] = [:]
        var problem: RoutePlanProblem?
        var stuckOnRoute = false
        for stream in leaving {
            if !stream.muted { steps.append(.mute(sinkInput: stream.sinkInput, view: stream.view)) }
            if let parking = s.parkingSink {
                if stream.sink != parking.index {
                    steps.append(.moveToParking(sinkInput: stream.sinkInput, view: stream.view, sink: parking.name))
                }
            } else {
                problem = .noParkingSink
                if stream.sink == routeIndex { stuckOnRoute = true }
            }
            if stream.view != owner { suppressed[stream.view] = true }
        }
        if let stream = entering, !stuckOnRoute {
            let parked = s.parkingSink.map { stream.sink == $0.index } ?? false
            if stream.sink == routeIndex || parked {
                // Unmuted while still parked (silent there), so it is heard from its first sample on the route.
                if stream.muted { steps.append(.unmute(sinkInput: stream.sinkInput, view: stream.view)) }
                if stream.sink != routeIndex {
                    steps.append(.moveToRoute(sinkInput: stream.sinkInput, view: stream.view, sink: s.routeSink))
                }
            } else {
                // On some other sink (audible there): moved first, unmuted once it is on the route.
                steps.append(.moveToRoute(sinkInput: stream.sinkInput, view: stream.view, sink: s.routeSink))
                if stream.muted { steps.append(.unmute(sinkInput: stream.sinkInput, view: stream.view)) }
            }
            suppressed[stream.view] = false
        }
        return RoutePlan(owner: owner, steps: steps, suppressed: suppressed, problem: problem)
    }

    /// A mixable route takes every stream, unmuted.
    private static func mixable(_ s: RouteSituation, _ routeIndex: UInt32) -> RoutePlan {
        var steps: [RouteStep] = []
        var suppressed: [Int: Bool] = [:]
        for stream in s.streams {
            if stream.sink != routeIndex { steps.append(.moveToRoute(sinkInput: stream.sinkInput, view: stream.view, sink: s.routeSink)) }
            if stream.muted { steps.append(.unmute(sinkInput: stream.sinkInput, view: stream.view)) }
            suppressed[stream.view] = false
        }
        return RoutePlan(owner: nil, steps: steps, suppressed: suppressed, problem: nil)
    }
}
