import Foundation
import Multiview

/// The routing arbiter (AVRoutingPlaybackArbiter's behaviour over PulseAudio sinks and a second X display):
/// `preferredParticipantForNonMixableAudioRoutes` decides which view's audio stream plays on a non-mixable sink
/// (the others are moved to a silent parking sink and muted, each flagged
/// `audioOutputSuppressedDueToNonMixableAudioRoute`), `preferredParticipantForExternalPlayback` which view's
/// video goes to the external display.
///
/// Threading: the actor owns the server connection, the route, the preferences, the views and the suppression
/// flags. PulseAudio events (from the client's libpulse thread, through an `AsyncStream`) and stage requests
/// arrive as actor calls. What the server says (our sink inputs, found by `multiview.instance`) is the truth:
/// after every change the actor asks `RoutePlanner` for the steps that bring the server to the preferences and
/// carries them out, one reconcile pass at a time (see `RoutingArbiter+Reconcile.swift`).
public actor RoutingArbiter {
    public nonisolated let configuration: RoutingConfiguration
    /// Tags our streams on the server (several players or test runs may share one daemon).
    public nonisolated let instance: String

    let connect: PulseAudioConnector
    let reconnectInterval: Duration
    var server: (any PulseAudioServer)?
    var connectionAttempted = false
    var isShutDown = false
    var route: AudioRoute?
    var parking: Parking = .none
    let external: ExternalDisplayWindow?

    /// The parking sink: the silent null sink suppressed streams wait on.
    enum Parking: Equatable {
        case none
        case loading
        case loaded(name: String, module: UInt32)
        var name: String? { if case .loaded(let name, _) = self { return name } else { return nil } }
    }

    struct Entry {
        var view: ViewIdentity
        /// Opens or closes the view's branch towards the external display.
        var setExternalVideo: @Sendable (Bool) async -> Void
        var ended = false
    }
    var entries: [Int: Entry] = [:]
    public private(set) var preferredParticipantForNonMixableAudioRoutes: Int?
    public private(set) var preferredParticipantForExternalPlayback: Int?
    /// Per view: its audio is held off the non-mixable route.
    public internal(set) var audioOutputSuppressedDueToNonMixableAudioRoute: [Int: Bool] = [:]
    var announcedOwner: Int??
    private var externalOwner: Int?

    private var subscribers: [Int: AsyncStream<RoutingEvent>.Continuation] = [:]
    private var nextSubscriber = 0
    private var history: [RoutingEvent] = []
    var listener: Task<Void, Never>?
    var reconnect: Task<Void, Never>?

    // The reconcile loop (one pass at a time; see `reconcile()`).
    var requestedPass = 0
    var completedPass = 0
    var passRunner: Task<Void, Never>?
    var passWaiters: [(pass: Int, continuation: CheckedContinuation<Void, Never>)] = []
    var staleRetries = 0

    /// Opens the external display when one is configured. Nothing talks to PulseAudio before `start`.
    /// `connect` makes the server connection (in `start`, and again after the server went away, every
    /// `reconnectInterval`); tests pass a fake server.
    public init(configuration: RoutingConfiguration,
                connect: @escaping PulseAudioConnector = { () async throws(PulseAudioError) -> any PulseAudioServer in
                    try await PulseAudioClient.connect()
                },
                reconnectInterval: Duration = .seconds(1)) {
        self.configuration = configuration
        self.connect = connect
        self.reconnectInterval = reconnectInterval
        instance = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        preferredParticipantForNonMixableAudioRoutes = configuration.preferredAudio
        preferredParticipantForExternalPlayback = configuration.preferredExternal
        if let display = configuration.externalDisplay {
            do {
                external = try ExternalDisplayWindow(display: display, width: configuration.externalWidth,
                                                     height: configuration.externalHeight)
            } catch {
                external = nil
                history = [.failed(.externalDisplay(display))]
            }
        } else {
            external = nil
        }
    }

    /// Connects to PulseAudio (first call only), picks the route (and, for a non-mixable one, loads the silent
    /// parking sink) and listens to the server. Without PulseAudio it reports one clear event and returns: the
    /// views play as before. Throws `RoutingError.noSuchSink` when `--audio-route` names no sink (then
    /// `start(useDefaultSink: true)` plays to the default sink instead).
    public func start(useDefaultSink: Bool = false) async throws(RoutingError) {
        guard !isShutDown else { return }
        if server == nil && !connectionAttempted {
            connectionAttempted = true
            do throws(PulseAudioError) {
                let connected = try await connect()
                attachServer(connected)
            } catch {
                emit(.pulseAudioUnavailable(error))
                return
            }
        }
        guard server != nil, route == nil else { return }
        try await pickRoute(useDefaultSink: useDefaultSink)
        await reconcile()
    }

    /// Unloads the parking sink, closes the external window and ends every event stream.
    public func shutdown() async {
        isShutDown = true
        reconnect?.cancel()
        listener?.cancel()
        listener = nil
        if case .loaded(_, let module) = parking, let server {
            do throws(PulseAudioError) { try await server.unloadModule(module) } catch { emit(.failed(.pulseAudio(error))) }
        }
        parking = .none
        server = nil
        external?.close()
        finishPasses()
        for (_, c) in subscribers { c.finish() }
        subscribers = [:]
    }

    // MARK: Views

    /// The player configuration a view gets: its stream starts where it may play (the route, or the parking sink
    /// when the route is non-mixable, so no second stream ever touches it), tagged with our instance, and (with an
    /// external display) a closed valve towards it.
    public func configure(_ base: PlayerConfiguration) -> PlayerConfiguration {
        var configuration = base
        if case .pulse = base.audio, let route, server != nil {
            configuration.audio = .pulse(device: route.isNonMixable ? parking.name : route.sinkName)
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
        await attach(view: player.view) { await player.setExternalVideoActive($0) }
    }

    /// A view known to routing by its identity and the switch of its external-display branch (what `attach(_:)`
    /// takes from a player; the arbiter's pure tests attach views without players).
    func attach(view: ViewIdentity, externalVideo: @escaping @Sendable (Bool) async -> Void) async {
        entries[view.number] = Entry(view: view, setExternalVideo: externalVideo)
        await applyExternal()
        await reconcile()
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
        await reconcile()
    }

    // MARK: Preferences

    /// Sets `preferredParticipantForNonMixableAudioRoutes` (nil: none, the default applies); returns once the
    /// streams are swapped on the server.
    public func setPreferredParticipantForNonMixableAudioRoutes(_ number: Int?) async {
        if let number, entries[number] == nil { emit(.noSuchView(number)); return }
        preferredParticipantForNonMixableAudioRoutes = number
        await reconcile()
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
    public var hasPulseAudio: Bool { server != nil }

    /// The route in use (nil without PulseAudio).
    public var currentRoute: AudioRoute? { route }

    var liveViews: Set<Int> { Set(entries.values.filter { !$0.ended }.map(\.view.number)) }
    var endedViews: Set<Int> { Set(entries.values.filter(\.ended).map(\.view.number)) }

    /// The view whose audio plays on the non-mixable route (preferred, else the first live view); nil when mixable.
    public var nonMixableOwner: Int? {
        guard route?.isNonMixable == true else { return nil }
        return RoutePlanner.nonMixableOwner(preferred: preferredParticipantForNonMixableAudioRoutes,
                                            liveViews: liveViews, endedViews: endedViews)
    }

    /// The view on the external display (preferred unless local-only; else the first view allowed there).
    public var externalPlaybackOwner: Int? {
        guard external != nil else { return nil }
        return RoutePlanner.externalOwner(preferred: preferredParticipantForExternalPlayback, liveViews: liveViews,
                                          endedViews: endedViews, localOnly: configuration.localOnly)
    }

    /// The short text a view's tag shows: which route it owns.
    public func label(for number: Int) -> String? {
        var parts: [String] = []
        if let route, route.isNonMixable {
            if nonMixableOwner == number { parts.append("♪ \(route.sinkName)") }
            else if audioOutputSuppressedDueToNonMixableAudioRoute[number] == true { parts.append("audio suppressed") }
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

    func emit(_ event: RoutingEvent) {
        history.append(event)
        for (_, c) in subscribers { c.yield(event) }
    }

    /// Opens the valve of the external owner's video branch and closes the others' (closing first).
    private func applyExternal() async {
        guard let external else { return }
        let owner = externalPlaybackOwner
        for (number, entry) in entries where number != owner { await entry.setExternalVideo(false) }
        if let owner, let entry = entries[owner] { await entry.setExternalVideo(true) }
        if owner != externalOwner {
            externalOwner = owner
            emit(.externalPlaybackOwner(view: owner, display: external.display))
        }
    }
}

/// The arbiter plugs into a stage: views are configured and attached as they are made, end/failure resets their
/// preferences, and `audio N` / `external N` (keys `a N` / `v N`) set the preferences.
extension RoutingArbiter: StageRouting {
    public func preferAudio(_ number: Int?) async {
        await setPreferredParticipantForNonMixableAudioRoutes(number)
    }

    public func preferExternal(_ number: Int?) async {
        await setPreferredParticipantForExternalPlayback(number)
    }
}
