/// What the routing layer is told on the command line (or by a test).
public struct RoutingConfiguration: Sendable {
    /// The sink every view plays to (nil: the server's default sink).
    public var audioRoute: String?
    /// Sinks the user marks non-mixable (`--non-mixable SINK`).
    public var nonMixable: Set<String> = []
    /// `--prefer-audio N` (1-based view number).
    public var preferredAudio: Int?
    /// `--prefer-external N`.
    public var preferredExternal: Int?
    /// `--local-only N`: views that never go to the external display (allowsExternalPlayback = false).
    public var localOnly: Set<Int> = []
    /// `--external-display :91`: the X display standing for the TV.
    public var externalDisplay: String?
    public var externalWidth = 1280
    public var externalHeight = 720

    public init(audioRoute: String? = nil, nonMixable: Set<String> = [], preferredAudio: Int? = nil,
                preferredExternal: Int? = nil, localOnly: Set<Int> = [], externalDisplay: String? = nil) {
        self.audioRoute = audioRoute; self.nonMixable = nonMixable; self.preferredAudio = preferredAudio
        self.preferredExternal = preferredExternal; self.localOnly = localOnly; self.externalDisplay = externalDisplay
    }
}

/// Why routing could not do what was asked.
public enum RoutingError: Error, Equatable, CustomStringConvertible {
    /// `--audio-route` (or a fallback) names no sink on the server.
    case noSuchSink(String, available: [String])
    /// The server refused a request or went away (the operation and libpulse's code are inside).
    case pulseAudio(PulseAudioError)
    /// The routed sink was removed and the server has no default sink to fall back to.
    case noFallbackSink(lost: String)
    /// The external display (an X display) does not answer.
    case externalDisplay(String)

    public var description: String {
        switch self {
        case .noSuchSink(let name, let available):
            return "no PulseAudio sink named '\(name)' (sinks: \(available.joined(separator: ", ")))"
        case .pulseAudio(let error): return "\(error)"
        case .noFallbackSink(let lost): return "no default sink to fall back to after \(lost) was removed"
        case .externalDisplay(let display): return "external display: cannot open the external X display '\(display)'"
        }
    }
}

/// What the arbiter did, as it happened.
public enum RoutingEvent: Sendable, Equatable, CustomStringConvertible {
    /// The audio route in use (at start and after a fallback).
    case audioRoute(AudioRoute)
    /// A view's audio was suppressed (muted, kept off the route) or let through again.
    case audioOutputSuppressedDueToNonMixableAudioRoute(view: Int, suppressed: Bool)
    /// The view whose audio plays on the non-mixable route; `byDefault` when nobody asked for one.
    case nonMixableAudioOwner(view: Int?, route: String, byDefault: Bool)
    /// The view shown on the external display (nil: none).
    case externalPlaybackOwner(view: Int?, display: String)
    /// A preference was reset because its view ended.
    case preferenceReset(view: Int, external: Bool)
    /// `--local-only` view asked for the external display: refused.
    case externalPlaybackNotAllowed(view: Int)
    /// The routed sink disappeared; streams now play on `fallback`.
    case routeLost(sink: String, fallback: String)
    /// PulseAudio cannot be used: the views play without routing (video unaffected).
    case pulseAudioUnavailable(PulseAudioError)
    /// The server answers again: routing resumes.
    case pulseAudioBack
    /// A request named a view that does not exist.
    case noSuchView(Int)
    /// A request could not be carried out.
    case failed(RoutingError)

    public var description: String {
        switch self {
        case .audioRoute(let route): return "audio route: \(route)"
        case .audioOutputSuppressedDueToNonMixableAudioRoute(let view, let suppressed):
            return "view \(view): audioOutputSuppressedDueToNonMixableAudioRoute = \(suppressed)"
        case .nonMixableAudioOwner(let view, let route, let byDefault):
            guard let view else { return "non-mixable route \(route): no view plays there" }
            return "non-mixable route \(route): view \(view) plays there"
                + (byDefault ? " (no preferred view: the first view, by default)" : " (preferred)")
        case .externalPlaybackOwner(let view, let display):
            return view.map { "external display \(display): view \($0)" } ?? "external display \(display): no view"
        case .preferenceReset(let view, let external):
            return "view \(view) ended: preferred view for the \(external ? "external display" : "non-mixable audio route") reset to none"
        case .externalPlaybackNotAllowed(let view):
            return "view \(view) is local-only (--local-only): it does not go to the external display"
        case .routeLost(let sink, let fallback):
            return "audio route \(sink) was removed: falling back to the default sink \(fallback)"
        case .pulseAudioUnavailable(let why): return "audio routing disabled: \(why); video keeps playing"
        case .pulseAudioBack: return "PulseAudio answers again: audio routing resumes"
        case .noSuchView(let n): return "no view \(n)"
        case .failed(let why): return "routing: \(why)"
        }
    }
}
