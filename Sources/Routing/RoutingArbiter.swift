import Foundation
import GStreamer
import Multiview

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
    case pulseAudioUnavailable(String)
    /// The server answers again: routing resumes.
    case pulseAudioBack
    /// A request named a view that does not exist.
    case noSuchView(Int)
    /// A request could not be carried out on the server.
    case failed(String)

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

/// The routing arbiter (AVRoutingPlaybackArbiter's behaviour over PulseAudio sinks and a second X display):
/// `preferredParticipantForNonMixableAudioRoutes` decides which view's audio stream plays on a non-mixable sink
/// (the others are moved to a silent parking sink and muted, each flagged
/// `audioOutputSuppressedDueToNonMixableAudioRoute`), `preferredParticipantForExternalPlayback` which view's
/// video goes to the external display.
///
/// Threading: the actor owns the route, the preferences, the views and the suppression flags. PulseAudio events
/// (from the client's libpulse thread, through an `AsyncStream`) and stage requests arrive as actor calls.
/// What the server says (our sink inputs, found by `multiview.instance`) is the truth; the actor reconciles the
/// server with the preferences after every change instead of keeping its own copy of stream placement.
public actor RoutingArbiter {
    public nonisolated let configuration: RoutingConfiguration
    /// Tags our streams on the server (several players or test runs may share one daemon).
    public nonisolated let instance: String

    private var client: PulseAudioClient?
    private var route: AudioRoute?
    private var parkingSink: String?
    private var parkingModule: UInt32?
    private let external: ExternalDisplayWindow?

    private struct Entry {
        var view: ViewIdentity
        var player: Player
        var ended = false
    }
    private var entries: [Int: Entry] = [:]
    public private(set) var preferredParticipantForNonMixableAudioRoutes: Int?
    public private(set) var preferredParticipantForExternalPlayback: Int?
    /// Per view: its audio is held off the non-mixable route.
    public private(set) var audioOutputSuppressedDueToNonMixableAudioRoute: [Int: Bool] = [:]
    private var announcedOwner: Int??
    private var externalOwner: Int?

    private var subscribers: [Int: AsyncStream<RoutingEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var history: [RoutingEvent] = []
    private var listener: Task<Void, Never>?
    private var reconnect: Task<Void, Never>?

    /// Connects to PulseAudio and the external display. Never throws: without PulseAudio (or with a missing route)
    /// it reports one clear event and the views play as before.
    public init(configuration: RoutingConfiguration) {
        self.configuration = configuration
        instance = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        preferredParticipantForNonMixableAudioRoutes = configuration.preferredAudio
        preferredParticipantForExternalPlayback = configuration.preferredExternal
        var startup: [RoutingEvent] = []
        var client: PulseAudioClient?
        do {
            client = try PulseAudioClient()
        } catch {
            startup.append(.pulseAudioUnavailable("\(error)"))
        }
        if let display = configuration.externalDisplay {
            do {
                external = try ExternalDisplayWindow(display: display, width: configuration.externalWidth,
                                                     height: configuration.externalHeight)
            } catch {
                external = nil
                startup.append(.failed("external display: \(error)"))
            }
        } else {
            external = nil
        }
        self.client = client
        history = startup
    }

    /// Picks the route (and, for a non-mixable one, loads the silent parking sink) and starts listening to the
    /// server. Throws `RoutingError.noSuchSink` when `--audio-route` names no sink (then `start(useDefaultSink:
    /// true)` plays to the default sink instead).
    public func start(useDefaultSink: Bool = false) throws {
        guard let client, route == nil else { return }
        let defaultSink = try client.serverDefaultSinkName()
        let sinks = try client.sinks()
        let name = useDefaultSink ? defaultSink : configuration.audioRoute ?? defaultSink
        guard let sink = sinks.first(where: { $0.name == name }) else {
            throw RoutingError.noSuchSink(name, available: sinks.map(\.name))
        }
        let chosen = AudioRoute(sink: sink, defaultSinkName: defaultSink, markedNonMixable: configuration.nonMixable)
        route = chosen
        emit(.audioRoute(chosen))
        if chosen.isNonMixable { try ensureParkingSink() }
        let events = client.events()
        listener = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.serverEvent(event)
            }
        }
    }

    /// Unloads the parking sink and closes the external window.
    public func shutdown() {
        reconnect?.cancel()
        listener?.cancel()
        listener = nil
        if let parkingModule, let client { try? client.unloadModule(parkingModule) }
        parkingModule = nil
        external?.close()
        for (_, c) in subscribers { c.finish() }
        subscribers = [:]
    }

    // MARK: Views

    /// The player configuration a view gets: its stream starts where it may play (the route, or the parking sink
    /// when the route is non-mixable, so no second stream ever touches it), tagged with our instance, and (with an
    /// external display) a closed valve towards it.
    public func configure(_ base: PlayerConfiguration) -> PlayerConfiguration {
        var configuration = base
        if case .pulse = base.audio, let route, client != nil {
            configuration.audio = .pulse(device: route.isNonMixable ? parkingSink : route.sinkName)
            configuration.audioStreamProperties["multiview.instance"] = instance
            // Our mute of a suppressed view must not be remembered by module-stream-restore for later streams.
            configuration.audioStreamProperties["module-stream-restore.id"] = "multiview-\(instance)-\(base.view.number)"
        }
        if let external {
            configuration.externalVideo = ExternalVideoTarget(display: external.display, handle: external.windowID,
                                                              width: external.width, height: external.height)
        }
        return configuration
    }

    public func attach(_ player: Player) async {
        let view = player.view
        entries[view.number] = Entry(view: view, player: player)
        await applyExternal()
        reconcileAudio()
    }

    /// A view ended (or failed): its preferences reset to none, and the defaults move on.
    public func viewEnded(_ number: Int) async {
        guard entries[number] != nil, entries[number]?.ended == false else { return }
        entries[number]?.ended = true
        if preferredParticipantForNonMixableAudioRoutes == number {
            preferredParticipantForNonMixableAudioRoutes = nil
            emit(.preferenceReset(view: number, external: false))
        }
        if preferredParticipantForExternalPlayback == number {
            preferredParticipantForExternalPlayback = nil
            emit(.preferenceReset(view: number, external: true))
        }
        await applyExternal()
        reconcileAudio()
    }

    // MARK: Preferences

    /// Sets `preferredParticipantForNonMixableAudioRoutes` (nil: none, the default applies) and swaps the streams.
    public func setPreferredParticipantForNonMixableAudioRoutes(_ number: Int?) {
        if let number, entries[number] == nil { emit(.noSuchView(number)); return }
        preferredParticipantForNonMixableAudioRoutes = number
        reconcileAudio()
    }

    public func setPreferredParticipantForExternalPlayback(_ number: Int?) async {
        if let number, entries[number] == nil { emit(.noSuchView(number)); return }
        if let number, configuration.localOnly.contains(number) {
            emit(.externalPlaybackNotAllowed(view: number))
            return
        }
        preferredParticipantForExternalPlayback = number
        await applyExternal()
    }

    /// Whether PulseAudio answered (without it the views play without audio routing).
    public var hasPulseAudio: Bool { client != nil }

    /// The route in use (nil without PulseAudio).
    public var currentRoute: AudioRoute? { route }

    /// The view whose audio plays on the non-mixable route (preferred, else the first live view); nil when mixable.
    public var nonMixableOwner: Int? {
        guard route?.isNonMixable == true else { return nil }
        // A preferred view not attached yet (the stage is still making views) already owns the route.
        if let preferred = preferredParticipantForNonMixableAudioRoutes, entries[preferred]?.ended != true { return preferred }
        return entries.values.filter { !$0.ended }.map(\.view.number).min()
    }

    /// The view on the external display (preferred unless local-only; else the first view allowed there).
    public var externalPlaybackOwner: Int? {
        guard external != nil else { return nil }
        let allowed = entries.values.filter { !$0.ended && !configuration.localOnly.contains($0.view.number) }
        if let preferred = preferredParticipantForExternalPlayback, entries[preferred]?.ended != true,
           !configuration.localOnly.contains(preferred) {
            return preferred
        }
        return allowed.map(\.view.number).min()
    }

    /// The short text a view's tag shows: which route it owns.
    public func label(for number: Int) -> String? {
        var parts: [String] = []
        if let route {
            if route.isNonMixable {
                if nonMixableOwner == number { parts.append("♪ \(route.sinkName)") }
                else if audioOutputSuppressedDueToNonMixableAudioRoute[number] == true { parts.append("audio suppressed") }
            }
        }
        if externalPlaybackOwner == number, let external { parts.append("▶ TV \(external.display)") }
        return parts.isEmpty ? nil : parts.joined(separator: "  ")
    }

    // MARK: Events

    /// Every routing event from now on (the ones before are in `pastEvents`).
    public func events() -> AsyncStream<RoutingEvent> {
        let (stream, continuation) = AsyncStream<RoutingEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        for event in history { continuation.yield(event) }
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        return stream
    }

    public var pastEvents: [RoutingEvent] { history }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    private func emit(_ event: RoutingEvent) {
        history.append(event)
        for (_, c) in subscribers { c.yield(event) }
    }

    // MARK: Reconciling the server with the preferences

    private func ensureParkingSink() throws {
        guard parkingSink == nil, let client else { return }
        let name = "multiview_parked_\(instance.replacingOccurrences(of: "-", with: "_"))"
        parkingModule = try client.loadModule("module-null-sink", arguments:
            "sink_name=\(name) sink_properties=device.description=Multiview-suppressed-audio")
        parkingSink = name
    }

    private func serverEvent(_ event: PulseEvent) {
        switch event {
        case .sinkRemoved(let index) where index == route?.sinkIndex:
            routeRemoved()
        case .sinkInputAdded, .sinkInputChanged:
            reconcileAudio()
        case .disconnected:
            serverLost()
        default:
            break
        }
    }

    /// The server went away: routing pauses (the players play on silently, see `Player.audioOutputLost`) and a task
    /// reconnects every second; then the route is picked again (falling back to the default sink when the routed
    /// sink did not come back) and the streams, as they return, are placed again.
    private func serverLost() {
        guard client != nil else { return }
        emit(.pulseAudioUnavailable("the PulseAudio server went away"))
        listener?.cancel()
        listener = nil
        client = nil
        route = nil
        parkingSink = nil
        parkingModule = nil
        announcedOwner = nil
        reconnect?.cancel()
        reconnect = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let client = try? PulseAudioClient() else { continue }
                await self?.serverBack(client)
                return
            }
        }
    }

    private func serverBack(_ newClient: PulseAudioClient) {
        client = newClient
        emit(.pulseAudioBack)
        do {
            try start()
        } catch {
            if let wanted = configuration.audioRoute, let fallback = try? newClient.serverDefaultSinkName() {
                emit(.routeLost(sink: wanted, fallback: fallback))
            }
            do { try start(useDefaultSink: true) } catch { emit(.failed("\(error)")) }
        }
        reconcileAudio()
    }

    /// The routed sink is gone: the server already moved our streams to its default sink; that becomes the route.
    private func routeRemoved() {
        guard let client, let lost = route else { return }
        do {
            let defaultSink = try client.serverDefaultSinkName()
            guard let sink = try client.sinks().first(where: { $0.name == defaultSink }) else {
                emit(.failed("no default sink to fall back to after \(lost.sinkName) was removed"))
                return
            }
            let fallback = AudioRoute(sink: sink, defaultSinkName: defaultSink, markedNonMixable: configuration.nonMixable)
            route = fallback
            emit(.routeLost(sink: lost.sinkName, fallback: fallback.sinkName))
            emit(.audioRoute(fallback))
            if fallback.isNonMixable { try ensureParkingSink() }
            announcedOwner = nil
            reconcileAudio()
        } catch {
            emit(.failed("fallback after \(lost.sinkName) was removed: \(error)"))
        }
    }

    /// Moves and mutes our streams so the server matches the route and the preferences. On a non-mixable route
    /// the old owner leaves (mute, then move to the parking sink) before the new one arrives (unmute while still
    /// parked, then move), so the route never carries two of our streams.
    private func reconcileAudio() {
        guard let client, let route else { return }
        let inputs: [PulseSinkInput]
        let sinks: [PulseSink]
        do {
            inputs = try client.sinkInputs().filter { $0.properties["multiview.instance"] == instance }
            sinks = try client.sinks()
        } catch {
            emit(.failed("cannot list streams: \(error)"))
            return
        }
        guard let routeSink = sinks.first(where: { $0.name == route.sinkName }) else { return }
        let parkingIndex = sinks.first(where: { $0.name == parkingSink })?.index
        func view(of input: PulseSinkInput) -> Int? { input.properties["multiview.view"].flatMap { Int($0) } }

        do {
            if route.isNonMixable {
                let owner = nonMixableOwner
                // Leaving first.
                for input in inputs {
                    guard let number = view(of: input), number != owner else { continue }
                    if !input.muted { try client.setMute(sinkInput: input.index, true) }
                    if input.sink != parkingIndex, let parkingSink { try client.move(sinkInput: input.index, toSink: parkingSink) }
                    setSuppressed(number, true)
                }
                for input in inputs {
                    guard let number = view(of: input), number == owner else { continue }
                    if input.muted { try client.setMute(sinkInput: input.index, false) }
                    if input.sink != routeSink.index { try client.move(sinkInput: input.index, toSink: route.sinkName) }
                    setSuppressed(number, false)
                }
                if announcedOwner != .some(owner) {
                    announcedOwner = .some(owner)
                    emit(.nonMixableAudioOwner(view: owner, route: route.sinkName,
                                               byDefault: owner != nil && preferredParticipantForNonMixableAudioRoutes != owner))
                }
            } else {
                for input in inputs {
                    guard let number = view(of: input) else { continue }
                    if input.sink != routeSink.index { try client.move(sinkInput: input.index, toSink: route.sinkName) }
                    if input.muted { try client.setMute(sinkInput: input.index, false) }
                    setSuppressed(number, false)
                }
            }
        } catch {
            emit(.failed("\(error)"))
        }
    }

    private func setSuppressed(_ number: Int, _ suppressed: Bool) {
        let before = audioOutputSuppressedDueToNonMixableAudioRoute[number] ?? false
        audioOutputSuppressedDueToNonMixableAudioRoute[number] = suppressed
        if before != suppressed {
            emit(.audioOutputSuppressedDueToNonMixableAudioRoute(view: number, suppressed: suppressed))
        }
    }

    /// Opens the valve of the external owner's video branch and closes the others' (closing first).
    private func applyExternal() async {
        guard let external else { return }
        let owner = externalPlaybackOwner
        for (number, entry) in entries where number != owner { await entry.player.setExternalVideoActive(false) }
        if let owner, let entry = entries[owner] { await entry.player.setExternalVideoActive(true) }
        if owner != externalOwner {
            externalOwner = owner
            emit(.externalPlaybackOwner(view: owner, display: external.display))
        }
    }
}

public enum RoutingError: Error, CustomStringConvertible {
    case noSuchSink(String, available: [String])
    public var description: String {
        switch self {
        case .noSuchSink(let name, let available):
            return "no PulseAudio sink named '\(name)' (sinks: \(available.joined(separator: ", ")))"
        }
    }
}

/// The arbiter plugs into a stage: views are configured and attached as they are made, end/failure resets their
/// preferences, and `audio N` / `external N` (keys `a N` / `v N`) set the preferences.
extension RoutingArbiter: StageRouting {
    public func preferAudio(_ number: Int?) {
        setPreferredParticipantForNonMixableAudioRoutes(number)
    }

    public func preferExternal(_ number: Int?) async {
        await setPreferredParticipantForExternalPlayback(number)
    }
}
