import Foundation
import GStreamer
import Synchronization

/// Static settings of one view.
public struct PlayerConfiguration: Sendable {
    public var view: ViewIdentity
    public var video: VideoOutput
    public var audio: AudioOutput
    /// Draw a visualisation (goom) for audio-only media so its tile is not blank. Off headless.
    public var visualizeAudioOnly: Bool
    /// Run the thread that waits on the clock and renders video (playsink's `vqueue`) with real-time priority,
    /// so a loaded machine does not wake it late (see `RealtimeStreamThreads`). Falls back silently to normal
    /// scheduling where the kernel refuses; `Player.realtimeRendering` tells which happened.
    public var realtimeVideoRendering: Bool
    /// Extra PulseAudio stream properties (the routing layer tags its streams so it can find them on the server).
    public var audioStreamProperties: [String: String] = [:]
    /// A second video output (the external display route), fed through a valve that is closed until
    /// `setExternalVideoActive(true)`.
    public var externalVideo: ExternalVideoTarget?

    public init(view: ViewIdentity, video: VideoOutput = .fakeSink, audio: AudioOutput = .fakeSink,
                visualizeAudioOnly: Bool = false, realtimeVideoRendering: Bool = true) {
        self.view = view; self.video = video; self.audio = audio; self.visualizeAudioOnly = visualizeAudioOnly
        self.realtimeVideoRendering = realtimeVideoRendering
    }
}

/// A value shared with streaming threads; the Mutex inside is its owner.
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

/// One view: a playbin3 pipeline of its own and the state around it.
///
/// Threading: the actor owns all mutable state. GStreamer posts bus messages on its streaming threads; the
/// bus's sync handler only copies them into an `AsyncStream`, and a task feeds them to the actor in order.
/// The pipeline itself is exposed (`pipeline`) so the coordination layer can set its clock and base time.
public actor Player {
    public nonisolated let view: ViewIdentity
    public nonisolated let pipeline: Pipeline
    public nonisolated let configuration: PlayerConfiguration

    private let bus: Bus
    private let tagOverlay: Element?
    /// The valve in front of the external display branch (nil without one); open = this view is on the external route.
    private let externalValve: Element?
    /// Latest media time (buffer PTS + duration) that reached a sink, written by pad probes on streaming
    /// threads; a Mutex-protected box is its owner.
    private let renderedMediaTime = RenderedMediaTime()
    /// Whether the kernel granted real-time scheduling to the video render thread (nil until it started, or
    /// when not requested). Written on that streaming thread; the Mutex is its owner.
    private nonisolated let realtimeGranted = LockedValue<Bool?>(nil)
    public nonisolated var realtimeRendering: Bool? { realtimeGranted.value }
    private var sinkProbes: [PadProbe] = []
    /// Hands every multiqueue added after init to `multiqueueFloor`.
    private var multiqueueSetup: SignalConnection?
    private nonisolated let multiqueueFloor = MultiqueueFloor(minimum: Player.minimumInterleave)
    /// Handlers of element messages (`watchElementMessages`, PlayerElementAccess.swift).
    nonisolated let elementMessageWatchers = ElementMessageWatchers()
    /// The least time a deinterleaving multiqueue holds per stream (its `min-interleave-time`).
    public static let minimumInterleave: Duration = .seconds(1)
    private var source: MediaSource?
    private var targetState: ElementState = .null
    private var currentState: ElementState = .null
    private var bufferingPercent = 100
    /// The pipeline was paused by a buffering message and must be resumed by the one that reaches 100 %.
    /// A flag, not `currentState == .paused`: the 100 % message can arrive before the PAUSED state change is
    /// read from the bus, and a view then stayed paused for good (seen under load in BadInputTests).
    private var heldForBuffering = false
    /// Video has stopped reaching the sink while playing (the source is starved: a stalled disk or pipe, a
    /// source that hangs without a buffering message); shown as buffering, like a network stall.
    private var videoStarved = false
    private let videoFlow = VideoFlow()
    private var videoFlowWatch: Task<Void, Never>?
    private var seekInFlight = false
    private var missingPlugins: [String] = []
    private var status = PlayerStatus(state: .stopped, waitingToPlay: nil)
    public private(set) var rate: Double = 1.0
    public private(set) var mediaInfo = ViewMediaInfo()
    public private(set) var failure: PlayerError?
    public private(set) var reachedEnd = false
    public private(set) var hasPlayed = false
    private weak var interceptor: (any TransportInterceptor)?
    /// Held by a coordinator until every view is ready.
    private var coordinatedWaiting = false { didSet { coordinatedWaitingChanges &+= 1 } }
    /// Counts changes of `coordinatedWaiting`, so a scheduled "start instant reached" knows whether it is stale.
    private var coordinatedWaitingChanges = 0
    /// The clock adopted from a coordination medium (nil when uncoordinated).
    private var coordinationClock: Clock?
    /// The PulseAudio stream was lost (server gone): audio goes to a fake sink until the server answers again.
    public private(set) var audioOutputLost = false
    private var audioReconnect: Task<Void, Never>?
    /// A new pulsesink is being brought up after a loss; an error from it means the server is not really back.
    private var reconnectingAudio = false
    /// Audio sinks follow the pipeline's (shared) clock: set by `adoptClock`, reapplied to a replacement sink.
    private var audioFollowsSharedClock = false
    /// The follower of the current PulseAudio sink while coordinated (replaced with the sink).
    private var audioClockFollower: AudioClockFollower?
    /// The guard on the current PulseAudio sink's clock while coordinated (see `AudioClockGuard`): armed before
    /// every start, since the follower can only work with a sink clock that libpulse has not wrecked.
    private var pulseClockGuard: AudioClockGuard?
    /// The current PulseAudio stream has never played: prime it before the next coordinated start (see
    /// `primeAudioStream`).
    private var audioStreamNeedsPriming = false
    /// The start made at the end of `prepareCoordinated`, run by the medium or by the next `startCoordinated`;
    /// withdrawn when anything else changes the pipeline first.
    private var pendingStart: PreparedSinkStart?
    /// `startCoordinated` started the sinks and the pipeline has not followed yet (`completeCoordinatedStart`).
    /// Meanwhile the pipeline reads PAUSED with its sinks PLAYING, so any other state change brings the pipeline
    /// up first: a PAUSED request would otherwise be a no-op that leaves the sinks playing.
    private var sinksAheadOfPipeline = false
    /// Holds the video sink's input while the audio stream is primed.
    private var primingVideoHold: PadProbe?
    /// The streams of the media (stream collection), what plays now (streams-selected) and the language wishes
    /// (LanguageSelection.swift).
    var streamCollection: [BusMessage.StreamInfo] = []
    var currentSelection: [BusMessage.StreamInfo] = []
    var languagePreferences = LanguagePreferences()

    private var subscribers: [Int: AsyncStream<PlayerEvent>.Continuation] = [:]
    private var nextSubscriberID = 0
    private var asyncDoneWaiters: [Int: CheckedContinuation<Void, Error>] = [:]
    private var nextWaiterID = 0

    public init(configuration: PlayerConfiguration) throws {
        let view = configuration.view
        self.view = view
        self.configuration = configuration
        let playbin: Pipeline
        do {
            playbin = try Pipeline(factory: "playbin3", name: "view\(view.number)")
        } catch {
            throw PlayerError(view: view, cause: .missingElement("playbin3"))
        }
        self.pipeline = playbin
        var overlay: Element?
        var externalValve: Element?
        do {
            // "buffering": playbin3 reports network buffering levels (stalls) — needed for stallRecovery.
            var flags = ["audio", "text", "soft-volume", "buffering"]
            switch configuration.video {
            case .none:
                break
            case .fakeSink:
                flags.append("video")
                let sink = try Element(factory: "fakesink", name: "videosink")
                try sink.set("sync", true)
                try sink.set("qos", true)
                try playbin.set("video-sink", try Player.withExternalBranch(sink, configuration, &externalValve))
            case .window(let target):
                flags.append("video")
                if configuration.visualizeAudioOnly { flags.append("vis") }
                // One sink per view, in the view's own pipeline: frames are shown on the streaming thread at
                // their clock time, so the window adds no scheduling of its own to the sync we measure.
                // Ghosted by hand: automatic ghosting would pick textoverlay's unlinked text_sink pad.
                let bin = try Bin.parse("""
                    videoconvert name=in ! videoscale ! \
                    video/x-raw,width=\(target.width),height=\(target.height),pixel-aspect-ratio=1/1 ! \
                    textoverlay name=tag valignment=bottom halignment=right font-desc="Sans Bold 11" \
                    shaded-background=true ! videoconvert ! ximagesink name=xsink force-aspect-ratio=false
                    """, ghostUnlinkedPads: false)
                guard let input = bin.child(named: "in") else { throw GStreamerError.missingElement(factory: "videoconvert") }
                try bin.addGhostPad(named: "sink", target: try input.staticPad("sink"))
                guard let sink = bin.child(named: "xsink") else {
                    throw GStreamerError.missingElement(factory: "ximagesink")
                }
                try sink.setWindowHandle(target.handle)
                try playbin.set("video-sink", try Player.withExternalBranch(bin, configuration, &externalValve))
                overlay = bin.child(named: "tag")
            }
            switch configuration.audio {
            case .none:
                flags.removeAll { $0 == "audio" }
            case .fakeSink:
                let sink = try Element(factory: "fakesink", name: "audiosink")
                try sink.set("sync", true)
                try playbin.set("audio-sink", sink)
            case .pulse(let device):
                try playbin.set("audio-sink", try Player.makePulseSink(configuration, device: device))
            }
            try playbin.set("flags", fromString: flags.joined(separator: "+"))
        } catch let error as GStreamerError {
            if case .missingElement(let f) = error { throw PlayerError(view: view, cause: .missingElement(f)) }
            throw PlayerError(view: view, cause: .pipeline(error.description))
        }
        self.tagOverlay = overlay
        self.externalValve = externalValve
        var probes: [PadProbe] = []
        let rendered = renderedMediaTime
        let flow = videoFlow
        for property in ["video-sink", "audio-sink"] {
            if let sink = try? playbin.get(property, as: Element.self), let pad = try? sink.staticPad("sink") {
                let isVideo = property == "video-sink"
                probes.append(pad.addProbe(.buffer) { info in
                    if let pts = info.pts { rendered.record(pts + (info.duration ?? .zero)) }
                    if isVideo { flow.arrived(frameDuration: info.duration) }
                    return .ok
                })
            }
        }
        self.sinkProbes = probes
        // Deinterleaving queues get a 1 s floor (see MultiqueueFloor): the ones of playbin3's own decodebin3
        // exist from the start, later ones are watched as they are added.
        let floor = multiqueueFloor
        for queue in playbin.descendants(where: { $0.factoryName == "multiqueue" }) { floor.watch(queue) }
        self.multiqueueSetup = try? playbin.connect("deep-element-added") { args in
            if let element = args.element(at: 2), element.factoryName == "multiqueue" { floor.watch(element) }
        }
        self.bus = playbin.bus()
        let granted = realtimeGranted
        let messages = bus.messages(realtime: configuration.realtimeVideoRendering
            ? RealtimeStreamThreads(owners: ["vqueue"]) { _, ok in granted.value = ok } : nil)
        Task { [weak self] in
            for await message in messages {
                guard let self else { return }
                await self.handle(message)
            }
        }
    }

    deinit {
        audioReconnect?.cancel()
        videoFlowWatch?.cancel()
        for (_, c) in subscribers { c.finish() }
        for (_, w) in asyncDoneWaiters { w.resume(throwing: CancellationError()) }
    }

    // MARK: Events

    /// A new stream of this player's events (each subscriber gets every event from now on).
    public func events() -> AsyncStream<PlayerEvent> {
        let (stream, continuation) = AsyncStream<PlayerEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextSubscriberID
        nextSubscriberID += 1
        subscribers[id] = continuation
        continuation.yield(.status(status))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    func publish(_ event: PlayerEvent) {
        for (_, c) in subscribers { c.yield(event) }
    }

    public var currentStatus: PlayerStatus { status }

    /// The media loaded last (nil before `load`).
    public var loadedSource: MediaSource? { source }

    // MARK: Transport

    /// Opens a file or URI. Missing local files fail here, before GStreamer gets involved.
    public func load(_ source: MediaSource) throws {
        if let path = source.path, !FileManager.default.fileExists(atPath: path) {
            let error = PlayerError(view: view, cause: .fileNotFound(path: path))
            fail(error)
            throw error
        }
        _ = try? pipeline.setState(.null)
        self.source = source
        failure = nil
        reachedEnd = false
        missingPlugins = []
        try pipeline.set("uri", source.uri)
    }

    /// Goes to PAUSED and waits until the first frame is ready (or the media failed).
    public func preroll(timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        try await changeState(to: .paused, timeout: timeout)
    }

    /// Plays. When a coordinator intercepts transport commands, it decides what happens (see `TransportInterceptor`).
    public func play(timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.play, player: self) { return }
        try await playLocally(timeout: timeout)
    }

    public func pause(timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.pause, player: self) { return }
        try await pauseLocally(timeout: timeout)
    }

    /// Plays this view only, bypassing any coordinator.
    public func playLocally(timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        coordinatedWaiting = false
        try await changeState(to: .playing, timeout: timeout)
    }

    /// Pauses this view only, bypassing any coordinator.
    public func pauseLocally(timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        try await changeState(to: .paused, timeout: timeout)
    }

    /// Stops and releases the decoders (NULL state). The pipeline can be played again.
    public func stop() {
        withdrawPendingStart()
        completeCoordinatedStart()
        targetState = .null
        _ = try? pipeline.setState(.null)
        currentState = .null
        updateStatus()
    }

    /// Accurate (frame-exact) or key-unit flushing seek; returns once the pipeline has prerolled there.
    public func seek(to position: ClockTime, accurate: Bool = true, timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.seek(position), player: self) { return }
        try await seekLocally(to: position, accurate: accurate, timeout: timeout)
    }

    /// Seeks this view only, bypassing any coordinator.
    public func seekLocally(to position: ClockTime, accurate: Bool = true, timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        if currentState < .paused { try await preroll(timeout: timeout) }
        if let duration, position > duration { throw PlayerError(view: view, cause: .pipeline("seek past the end")) }
        try await flushingSeek(to: position, rate: rate, flags: accurate ? [.flush, .accurate] : [.flush, .keyUnit],
                               timeout: timeout)
        publish(.seekCompleted(position: self.position ?? position))
    }

    /// Relative seek, clamped to the media (see `seekTarget(by:)`).
    public func seek(by seconds: Double) async throws {
        if let interceptor, try await interceptor.intercept(.seekBy(seconds), player: self) { return }
        try await seek(to: seekTarget(by: seconds))
    }

    /// Where `seek(by:)` goes from here: the position moved by `seconds`, kept between 0 and 0.1 s before the end.
    public func seekTarget(by seconds: Double) -> ClockTime {
        var target = max(0, (position?.seconds ?? 0) + seconds)
        if let duration { target = min(target, max(0, duration.seconds - 0.1)) }
        return .seconds(target)
    }

    /// Changes the playback rate with a flushing accurate seek at the current position.
    public func setRate(_ newRate: Double, timeout: Duration = .seconds(20)) async throws {
        if let interceptor, try await interceptor.intercept(.rate(newRate), player: self) { return }
        try await setRateLocally(newRate, timeout: timeout)
    }

    /// Changes this view's rate only, bypassing any coordinator.
    public func setRateLocally(_ newRate: Double, timeout: Duration = .seconds(20)) async throws {
        try checkNotFailed()
        guard newRate > 0 else { throw PlayerError(view: view, cause: .pipeline("rate must be positive")) }
        if currentState < .paused { try await preroll(timeout: timeout) }
        rate = newRate
        try await flushingSeek(to: position ?? .zero, rate: newRate, flags: [.flush, .accurate], timeout: timeout)
        publish(.rateChanged(newRate))
    }

    public var position: ClockTime? { pipeline.queryPosition() }
    public var duration: ClockTime? { pipeline.queryDuration() }

    /// Updates the tag burnt into the tile (window output only).
    public func setTag(_ text: String) {
        try? tagOverlay?.set("text", text)
    }

    /// Shows (or stops showing) this view on the external display route. The grid tile keeps playing either way;
    /// both branches render on the same pipeline clock, so coordinated views stay aligned on both screens.
    public func setExternalVideoActive(_ active: Bool) {
        try? externalValve?.set("drop", !active)
    }

    /// Whether this view's video currently flows to the external display.
    public var isExternalVideoActive: Bool {
        guard let externalValve, let drop = try? externalValve.get("drop", as: Bool.self) else { return false }
        return !drop
    }

    /// The view's own PulseAudio stream. pulsesink names its stream after the title tag ("Playback Stream" without
    /// one), so a taginject in front gives every view's stream the view's name in pactl/pavucontrol. The `volume`
    /// element (passthrough unless muted) silences the samples while the stream is primed (`primeAudioStream`)
    /// without touching the stream's volume or mute on the server, which the routing layer and PulseAudio's
    /// role-cork module own.
    static func makePulseSink(_ configuration: PlayerConfiguration, device: String?) throws -> Element {
        let view = configuration.view
        let bin = try Bin.parse("taginject name=name ! volume name=primer ! pulsesink name=pulse")
        guard let naming = bin.child(named: "name"), let sink = bin.child(named: "pulse") else {
            throw GStreamerError.missingElement(factory: "pulsesink")
        }
        let quoted = view.name.replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "'")
        try naming.set("tags", "title=\"\(quoted)\"")
        if let device { try sink.set("device", device) }
        try sink.set("client-name", "Multiview")
        // multiview.view names the view on the server (the routing layer finds its streams by it).
        let extra = configuration.audioStreamProperties.sorted { $0.key < $1.key }
            .map { ",\($0.key)=(string)\"\($0.value)\"" }.joined()
        try sink.set("stream-properties", fromString:
            "props,media.role=video,application.name=Multiview,multiview.view=(string)\"\(view.number)\"" + extra)
        // Installed now, while no thread reads the sink's clock; armed before each start of a coordinated view.
        _ = try sink.guardAudioClock()
        return bin
    }

    /// `sink` alone, or (with an external display configured) a tee feeding `sink` and, through a closed valve,
    /// an `ximagesink` drawing into the external display's window. The external sink is `async=false`: it gets no
    /// buffers while the valve is closed and must not hold up preroll.
    static func withExternalBranch(_ sink: Element, _ configuration: PlayerConfiguration,
                                   _ valve: inout Element?) throws -> Element {
        guard let external = configuration.externalVideo else { return sink }
        let display = external.display.replacingOccurrences(of: "\"", with: "")
        let bin = try Bin.parse("""
            tee name=split ! queue name=local \
            split. ! valve name=external drop=true ! queue max-size-buffers=3 leaky=downstream ! videoconvert ! \
            videoscale ! video/x-raw,width=\(external.width),height=\(external.height),pixel-aspect-ratio=1/1 ! \
            textoverlay text="\(configuration.view.number) \(configuration.view.name.replacingOccurrences(of: "\"", with: "'"))" \
            valignment=top halignment=left font-desc="Sans Bold 14" shaded-background=true ! \
            videoconvert ! ximagesink name=externalsink display="\(display)" async=false force-aspect-ratio=false
            """, ghostUnlinkedPads: false)
        guard let split = bin.child(named: "split"), let local = bin.child(named: "local"),
              let externalSink = bin.child(named: "externalsink") else {
            throw GStreamerError.missingElement(factory: "tee/valve/ximagesink")
        }
        try bin.add(sink)
        try local.link(sink)
        try bin.addGhostPad(named: "sink", target: try split.staticPad("sink"))
        try externalSink.setWindowHandle(external.handle)
        valve = bin.child(named: "external")
        return bin
    }

    // MARK: Coordination primitives (used by the coordination layer; they never go through the interceptor)

    /// Installs (or removes) the object that intercepts this player's transport commands. Held weakly: the
    /// coordinator owns the player, not the other way round.
    public func setTransportInterceptor(_ interceptor: (any TransportInterceptor)?) {
        self.interceptor = interceptor
    }

    /// Runs the pipeline on `clock` and stops it from choosing its own base time (start-time NONE), so the
    /// coordinator's base time is kept across PAUSED→PLAYING. Audio sinks then follow that clock (skew
    /// correction) rather than providing their own.
    public func adoptClock(_ clock: Clock) {
        coordinationClock = clock
        pipeline.useClock(clock)
        pipeline.startTime = nil
        audioFollowsSharedClock = true
        if let sink = currentPulseSink()?.pulse { followSharedClock(sink) }
    }

    /// The pipeline's audio sink and the pulsesink in it (the sink itself, or the "pulse" child of our sink bin),
    /// nil without PulseAudio output.
    private func currentPulseSink() -> (audio: Element, pulse: Element)? {
        guard let audio = try? pipeline.get("audio-sink", as: Element.self),
              let pulse = audio.factoryName == "pulsesink" ? audio : audio.asBin()?.child(named: "pulse") else { return nil }
        return (audio, pulse)
    }

    /// Makes `pulseSink` follow the shared clock through an `AudioClockFollower` (custom slaving; see there why
    /// not pulsesink's own skew slaving). The alternative, slave-method=resample, together with start-time NONE
    /// and an explicit base time froze pulsesink pipelines after ~2 s in our tests.
    private func followSharedClock(_ pulseSink: Element) {
        try? pulseSink.set("provide-clock", false)
        pulseClockGuard = pulseSink.audioClockGuard
        let follower = AudioClockFollower()
        do {
            try pulseSink.setCustomAudioSlaving { follower.observe($0) }
            audioClockFollower = follower
            audioStreamNeedsPriming = true
        } catch {
            // Not an audio base sink (cannot happen with pulsesink): fall back to the sink's own skew slaving.
            try? pulseSink.set("slave-method", fromString: "skew")
            audioClockFollower = nil
        }
    }

    /// How the current audio sink's playout follows the shared clock (corrections made, last skew), or nil when
    /// the view is not coordinated or has no PulseAudio output.
    public var audioClockStatistics: AudioClockFollower.Statistics? { audioClockFollower?.statistics }

    /// Local timing while detached from the group (a suspension): the pipeline picks its own base time again at
    /// each PLAYING and after each flushing seek, so local seeks and rate changes play at normal speed. (With
    /// start-time NONE a local flushing seek would keep the group's old base time and every frame would be late.)
    /// The next `startCoordinated` puts the group's timing back.
    public func useLocalTiming() {
        pipeline.startTime = .zero
    }

    /// Goes back to an uncoordinated pipeline: automatic clock, base time chosen at each PLAYING.
    public func releaseClock() {
        coordinationClock = nil
        audioFollowsSharedClock = false
        pulseClockGuard = nil
        pipeline.autoClock()
        pipeline.startTime = .zero
        coordinatedWaiting = false
        updateStatus()
    }

    /// Shows "waiting to play — waiting for coordinated playback" (or clears it).
    public func setWaitingForCoordinatedPlayback(_ waiting: Bool) {
        coordinatedWaiting = waiting
        updateStatus()
    }

    /// Prepares a coordinated start: PAUSED, then a flushing accurate seek to `time` at `rate`, prerolled.
    /// Afterwards the first frame (media time `time`) has running time 0, so `startCoordinated(at:)` can
    /// place it on the shared clock exactly. `whenPrepared` gets the prepared start (`preparedStart`) on this
    /// actor as soon as it exists, before this call returns.
    public func prepareCoordinated(at time: ClockTime, rate newRate: Double, timeout: Duration = .seconds(20),
                                   whenPrepared: (@Sendable (PreparedSinkStart?) -> Void)? = nil) async throws {
        try checkNotFailed()
        withdrawPendingStart()
        coordinatedWaiting = true
        updateStatus()
        // PAUSED first, then the seek: seeking while the PLAYING→PAUSED change is still pending can lose the
        // seek under load (the view then keeps its own position).
        if currentState != .paused || targetState != .paused {
            try await changeState(to: .paused, timeout: timeout)
        }
        if audioStreamNeedsPriming { try await primeAudioStream(timeout: timeout) }
        var target = time
        if let duration, target >= duration { target = duration - .milliseconds(40) }
        rate = newRate
        try await flushingSeek(to: target, rate: newRate, flags: [.flush, .accurate], timeout: timeout) {
            // A network view is ready only with a full buffer; otherwise it would stall (and be suspended)
            // right after the coordinated start.
            let deadline = ContinuousClock.now + timeout
            while self.bufferingPercent < 100 && ContinuousClock.now < deadline && self.failure == nil {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        // Made now, while the group waits for the slowest view anyway, so that the start itself is as short as
        // possible (every view's start must land before the instant; see the medium's start margin).
        pendingStart = makeSinkStart()
        // Synchronously, here: a coordination medium may start the whole group from this call (the last view to
        // be ready does), and every hop before it would delay the start.
        whenPrepared?(pendingStart)
    }

    /// How long a fresh stream plays (silently) before its first coordinated start. 200 ms and 600 ms measured
    /// alike in the by-ear test.
    static let audioPrimingDuration: Duration = .milliseconds(200)

    /// Plays a paused pipeline whose PulseAudio stream has never played for a moment, silent and with its video
    /// held back, then pauses it again (the caller's flushing seek follows).
    ///
    /// Why: a stream's first coordinated start was heard anywhere from 0 to 106 ms off the clock (the by-ear
    /// test, 6 of 9 runs more than 2 ms off), while every start after the stream had once played landed within
    /// 1 ms — PulseAudio renegotiates the sink's latency when a new stream first plays, and neither the sink's
    /// clock nor `AudioClockFollower` can see where that leaves the stream's samples. Costs ~0.25 s once per
    /// stream (first start, late join, a sink replaced after PulseAudio came back), while the view waits anyway.
    private func primeAudioStream(timeout: Duration) async throws {
        audioStreamNeedsPriming = false
        guard let clock = coordinationClock, let audio = currentPulseSink()?.audio else { return }
        // Silent samples, not a muted stream: a mute round trip on the server broke module-role-cork's corking
        // (the audioSessionInterrupted suspension) in our tests, and a volume round trip lost the volume.
        let silencer = audio.asBin()?.child(named: "primer")
        try? silencer?.set("mute", true)
        // The video sink's input is blocked while priming (not dropped: the decoder would race ahead unsynced),
        // so the grid keeps showing the prepared frame.
        let video = try? pipeline.get("video-sink", as: Element.self)
        primingVideoHold = (try? video?.staticPad("sink"))?.addProbe([.buffer, .blocking]) { _ in .ok }
        defer {
            primingVideoHold = nil   // releasing the token removes the probe
            try? silencer?.set("mute", false)
        }
        pipeline.baseTime = clock.time - (pipeline.queryLatency()?.minimum ?? .zero)
        try await changeState(to: .playing, timeout: timeout)
        try await Task.sleep(for: Player.audioPrimingDuration)
        // Let frames through again before pausing: the video sink must preroll one to reach PAUSED (the
        // caller's flushing seek replaces it at once).
        primingVideoHold = nil
        try await changeState(to: .paused, timeout: timeout)
    }

    /// How late a "start at C" may arrive and still start (its first frame then shows at most this much late,
    /// the sinks being up ~0.1 ms after the check); later ones are refused and caught up by the caller.
    public static let lateStartTolerance: Duration = .milliseconds(1)

    /// The start prepared by the last `prepareCoordinated`, for a coordination medium to run itself (see
    /// `PreparedSinkStart`); nil when there is none (no shared clock, no sinks).
    public var preparedStart: PreparedSinkStart? { pendingStart }

    /// Starts a prepared pipeline so that its prepared media time is rendered at `clockTime` on the shared
    /// clock: base time = clockTime − pipeline latency, its sinks to PLAYING at once, the rest of the pipeline
    /// right after. No position is nudged afterwards. When a medium already ran `preparedStart` for this
    /// instant, only the player's own state follows.
    ///
    /// Returns false, and leaves the pipeline prepared (PAUSED) without starting it, when the instant passed
    /// more than `lateStartTolerance` ago: started that late, it would render its first frames late and rush to
    /// catch up — the caller should prepare it again further ahead instead.
    @discardableResult
    public func startCoordinated(at clockTime: ClockTime) throws -> Bool {
        try checkNotFailed()
        completeCoordinatedStart()
        // Only sinks wait on the clock, so starting them is the whole start: a few element state changes
        // (~0.1 ms) instead of the whole pipeline's (0.3–4 ms for playbin3 on two cores).
        let prepared = pendingStart ?? makeSinkStart()
        pendingStart = nil
        var sinksStarted = false
        if let prepared {
            guard RealtimeSection.run({ prepared.start(at: clockTime) }) else { return false }
            if case .started(_, let started) = prepared.withdraw() { sinksStarted = started }
        } else {
            let clock = coordinationClock ?? pipeline.clock
            if let now = clock?.time, now >= clockTime + ClockTime(Player.lateStartTolerance) { return false }
            pipeline.startTime = nil
            pipeline.baseTime = clockTime - (pipeline.queryLatency()?.minimum ?? .zero)
        }
        targetState = .playing
        heldForBuffering = false
        rearmVideoFlowWatch()
        // Still waiting until the instant itself: the pipeline is PLAYING at once, but nothing is shown before
        // `clockTime`, and a status saying "playing" earlier would be a lie a script could act on.
        coordinatedWaiting = true
        if sinksStarted {
            // The rest of the pipeline follows in a moment, off the critical path. (Deferred to the instant
            // instead, the by-ear test's hand-started control heard a 20 ms offset as 16 ms in 1 run of 4.)
            sinksAheadOfPipeline = true
            Task { [weak self] in await self?.completeCoordinatedStart() }
        } else {
            do {
                try pipeline.setState(.playing)
            } catch {
                throw PlayerError(view: view, cause: .pipeline("cannot start at \(clockTime)"))
            }
        }
        let change = coordinatedWaitingChanges
        let now = (coordinationClock ?? pipeline.clock)?.time ?? clockTime
        if clockTime > now {
            let wait = Duration.nanoseconds(Int64(clockTime.nanoseconds - now.nanoseconds))
            Task { [weak self] in
                try? await Task.sleep(for: wait)
                await self?.coordinatedStartReached(change)
            }
        } else {
            coordinatedStartReached(change)
        }
        updateStatus()
        publish(.rateChanged(rate))
        return true
    }

    /// A start for the pipeline as it is now (nil without a shared clock or sinks).
    private func makeSinkStart() -> PreparedSinkStart? {
        // The pipeline only hands its clock to elements at PAUSED→PLAYING, so ask the adopted clock itself.
        guard let clock = coordinationClock ?? pipeline.clock else { return nil }
        let sinks = pipeline.leafSinks()
        guard !sinks.isEmpty else { return nil }
        return PreparedSinkStart(pipeline: pipeline, sinks: sinks, clock: clock,
                                 latency: pipeline.queryLatency()?.minimum ?? .zero, audioClockGuard: pulseClockGuard)
    }

    /// Takes back the prepared start before the player moves on. One a medium ran just before, which this player
    /// never took up (its "play at C" has not arrived), is undone: the sinks go back to the prepared pipeline's
    /// PAUSED, so whatever comes next starts from a consistent pipeline.
    private func withdrawPendingStart() {
        guard let prepared = pendingStart else { return }
        pendingStart = nil
        if case .started = prepared.withdraw() {
            for sink in prepared.sinks { _ = try? sink.setState(.paused) }
        }
    }

    /// Brings the pipeline to PLAYING behind sinks that `startCoordinated` started ahead of it (its children
    /// already carry the same clock and base time, so nothing moves on screen).
    private func completeCoordinatedStart() {
        guard sinksAheadOfPipeline else { return }
        sinksAheadOfPipeline = false
        guard targetState == .playing, failure == nil else { return }
        _ = try? pipeline.setState(.playing)
    }

    /// The start instant of `startCoordinated` has come: playing for real, unless something changed since.
    private func coordinatedStartReached(_ change: Int) {
        guard change == coordinatedWaitingChanges, targetState == .playing else { return }
        coordinatedWaiting = false
        updateStatus()
    }

    // MARK: Starved video

    /// How long video may stop reaching the sink while playing before the view counts as stalled (at least four
    /// frame durations, for slow-frame-rate media).
    static let videoStarvationLimit: Duration = .milliseconds(500)

    /// Watches video arrivals from now on: nothing counts until the first frame after this call arrives (a
    /// seek's preroll, audio-only media and the wait for a coordinated start are not starvation).
    private func rearmVideoFlowWatch() {
        videoFlow.rearm()
        if videoStarved {
            videoStarved = false
            updateStatus()
        }
        guard videoFlowWatch == nil else { return }
        videoFlowWatch = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                guard let self else { return }
                await self.checkVideoFlow()
            }
        }
    }

    /// Called every 100 ms: marks the view starved (status buffering, so a coordinator suspends it with
    /// `stallRecovery`) when no frame has arrived for the limit while playing, and unmarks it when frames come
    /// again (in whatever state: a suspended view may have been paused meanwhile).
    private func checkVideoFlow() {
        guard let silence = videoFlow.sinceLastArrival else { return }
        let limit = max(Player.videoStarvationLimit, videoFlow.frameDuration * 4)
        if videoStarved {
            if silence < limit {
                videoStarved = false
                updateStatus()
            }
        } else if silence > limit, targetState == .playing, currentState == .playing, !seekInFlight, !reachedEnd,
                  !coordinatedWaiting, failure == nil {
            videoStarved = true
            updateStatus()
        }
    }

    // MARK: Internals

    private func checkNotFailed() throws {
        if let failure { throw failure }
        if source == nil { throw PlayerError(view: view, cause: .pipeline("no media loaded")) }
    }

    /// The one flushing seek every path uses (seek, rate change, coordinated prepare): the status shows
    /// "seeking" until the pipeline has prerolled at `position` (and `thenWait`, if given, is done).
    private func flushingSeek(to position: ClockTime, rate: Double, flags: Element.SeekFlags, timeout: Duration,
                              thenWait: (() async throws -> Void)? = nil) async throws {
        withdrawPendingStart()
        completeCoordinatedStart()
        seekInFlight = true
        reachedEnd = false
        renderedMediaTime.reset()
        rearmVideoFlowWatch()
        updateStatus()
        defer {
            seekInFlight = false
            updateStatus()
        }
        do {
            try pipeline.seek(rate: rate, flags: flags, position: position)
        } catch {
            throw PlayerError(view: view, cause: .pipeline("seek to \(position) at rate \(rate) refused"))
        }
        try await waitForAsyncDone(timeout: timeout)
        try await thenWait?()
    }

    private func changeState(to state: ElementState, timeout: Duration) async throws {
        withdrawPendingStart()
        completeCoordinatedStart()
        targetState = state
        heldForBuffering = false
        updateStatus()
        if state == .playing { pulseClockGuard?.arm() }
        let result: StateChangeResult
        do {
            result = try pipeline.setState(state)
        } catch {
            // The bus carries the real cause; give it a moment to arrive and be classified.
            try? await Task.sleep(for: .milliseconds(200))
            let error = failure ?? PlayerError(view: view, cause: .pipeline("cannot change state to \(state)"))
            fail(error)
            throw error
        }
        if result == .async {
            // Wait on the element's own state rather than on an ASYNC_DONE message: a PLAYING requested right
            // after a flushing seek may never post one (the seek's was already consumed).
            try await waitUntilSettled(timeout: timeout)
        }
        if let failure { throw failure }
    }

    /// Waits until no asynchronous state change is pending (answered by the pipeline itself, in 5 ms steps).
    /// After an ASYNC_DONE this also guards against a stale one (left over from an earlier preroll) having
    /// woken us before the current seek had really prerolled.
    private func waitUntilSettled(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while pipeline.isStateChangePending {
            if let failure { throw failure }
            if ContinuousClock.now > deadline {
                throw PlayerError(view: view, cause: .timeout("no preroll after \(timeout)"))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        if pipeline.stateChangeFailed {
            // The change failed; the error message that says why is still on its way over the bus (the actor
            // handles it in order). Wait for it briefly so the caller gets the classified cause.
            let errorDeadline = ContinuousClock.now + .seconds(2)
            while failure == nil && ContinuousClock.now < errorDeadline { try await Task.sleep(for: .milliseconds(5)) }
            let error = failure ?? PlayerError(view: view, cause: .pipeline("state change to \(targetState) failed"))
            fail(error)
            throw error
        }
        if let failure { throw failure }
        // The bus message saying so may still be on its way: take the state from the pipeline now.
        currentState = pipeline.currentState
        updateStatus()
    }

    /// ASYNC_DONE (the prompt signal), then the element's own word that nothing is pending.
    private func waitForAsyncDone(timeout: Duration) async throws {
        try await waitForAsyncDoneMessage(timeout: timeout)
        try await waitUntilSettled(timeout: timeout)
    }

    private func waitForAsyncDoneMessage(timeout: Duration) async throws {
        if let failure { throw failure }
        let id = nextWaiterID
        nextWaiterID += 1
        let view = self.view
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            await self?.expireWaiter(id, error: PlayerError(view: view, cause: .timeout("no preroll after \(timeout)")))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            asyncDoneWaiters[id] = c
        }
    }

    private func expireWaiter(_ id: Int, error: Error) {
        asyncDoneWaiters.removeValue(forKey: id)?.resume(throwing: error)
    }

    private func resumeWaiters(with error: Error? = nil) {
        let waiters = asyncDoneWaiters
        asyncDoneWaiters = [:]
        for (_, w) in waiters {
            if let error { w.resume(throwing: error) } else { w.resume() }
        }
    }

    private func fail(_ error: PlayerError) {
        guard failure == nil else { return }
        withdrawPendingStart()
        completeCoordinatedStart()
        failure = error
        targetState = .null
        _ = try? pipeline.setState(.null)
        currentState = .null
        updateStatus()
        publish(.failed(error))
        resumeWaiters(with: error)
    }

    private func updateStatus() {
        var next: PlayerStatus
        if failure != nil || currentState <= .ready && targetState <= .ready && !coordinatedWaiting {
            next = PlayerStatus(state: .stopped, waitingToPlay: nil)
        } else if coordinatedWaiting {
            next = PlayerStatus(state: currentState == .playing ? .playing : .paused,
                                waitingToPlay: .waitingForCoordinatedPlayback)
        } else if targetState == .playing && (bufferingPercent < 100 || videoStarved) {
            next = PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: videoStarved ? 0 : bufferingPercent))
        } else if currentState == .playing && !seekInFlight {
            next = PlayerStatus(state: .playing, waitingToPlay: nil)
        } else if targetState == .playing {
            next = PlayerStatus(state: currentState == .playing ? .playing : .paused,
                                waitingToPlay: seekInFlight ? .seeking : .loading)
        } else {
            next = PlayerStatus(state: currentState >= .paused ? .paused : .stopped,
                                waitingToPlay: nil)
        }
        if next != status {
            status = next
            if next.state == .playing { hasPlayed = true }
            publish(.status(next))
        }
    }

    private func handle(_ message: BusMessage) {
        completeCoordinatedStart()
        switch message {
        case .error(let info) where info.source.factory == "pulsesink" && configuration.audio != .fakeSink:
            // PulseAudio went away (stopped, restarted): the view plays on without sound instead of failing.
            // Later errors of the lost sink (it posts several) change nothing.
            if !audioOutputLost || reconnectingAudio { audioOutputLost(info.message) }
        case .error(let info):
            let cause = PlayerError.classify(info, source: source ?? MediaSource(""), missingPlugins: missingPlugins)
            fail(PlayerError(view: view, cause: cause, underlying: info))
        case .warning(let info):
            publish(.warning(info.message))
        case .missingPlugin(_, let description):
            missingPlugins.append(description)
        case .element(let source, let structure):
            elementMessageWatchers.deliver(source, structure)
        case .eos(let source) where source.isPipeline:
            // GStreamer ends a truncated file with a plain EOS where its data stops; a player must say so.
            // (A position query at EOS answers the segment end, so we use the last timestamp the sinks saw.)
            if let duration, let end = renderedMediaTime.latest, rate > 0,
               end + .seconds(max(1.0, duration.seconds * 0.05)) < duration {
                fail(PlayerError(view: view, cause: .truncatedMedia(endedAt: end, duration: duration)))
                return
            }
            reachedEnd = true
            publish(.endOfStream)
        case .stateChanged(let source, _, let new, _) where source.isPipeline:
            // Frames before this PLAYING (a pause, a buffering hold) say nothing about starvation now.
            if new == .playing && currentState != .playing { rearmVideoFlowWatch() }
            currentState = new
            updateStatus()
        case .asyncDone(let source, _) where source.isPipeline:
            resumeWaiters()
            applyLanguagePreferencesReporting()
            updateStatus()
        case .buffering(_, let percent):
            bufferingPercent = percent
            // Standard network buffering: hold in PAUSED until the queue is full, then carry on.
            if targetState == .playing {
                if percent < 100 && currentState == .playing && !heldForBuffering {
                    heldForBuffering = true
                    _ = try? pipeline.setState(.paused)
                }
                if percent >= 100 && (heldForBuffering || currentState == .paused) {
                    heldForBuffering = false
                    pulseClockGuard?.arm()
                    _ = try? pipeline.setState(.playing)
                }
            }
            updateStatus()
        case .clockLost:
            // The clock provider went away: re-select a clock by cycling through PAUSED.
            if targetState == .playing {
                _ = try? pipeline.setState(.paused)
                pulseClockGuard?.arm()
                _ = try? pipeline.setState(.playing)
            }
        case .requestState(_, let state):
            // pulsesink asks to pause when PulseAudio corks the stream, and to play when it uncorks. The view
            // stops rendering at once; it resumes by itself only when uncoordinated (a coordinator rejoins the
            // group's time instead).
            guard state >= .paused, failure == nil else { break }
            publish(.interruption(began: state == .paused))
            if state == .paused || interceptor == nil {
                targetState = state
                _ = try? pipeline.setState(state)
                updateStatus()
            }
        case .streamCollection(_, let streams):
            updateMediaInfo(streams)
            streamCollection = mergingLanguages(into: streams, from: streamCollection)
            // Selecting while prerolling can stall the preroll (pulsesink): wishes wait for the first ASYNC_DONE.
            if currentState >= .paused { applyLanguagePreferencesReporting() }
        case .streamsSelected(_, let streams):
            updateMediaInfo(streams)
            currentSelection = streams
            // Language tags can reach the streams after the collection was posted: learn them here, and try the
            // wishes again if that made a difference.
            let merged = mergingLanguages(into: streamCollection, from: streams)
            if merged != streamCollection {
                streamCollection = merged
                if currentState >= .paused { applyLanguagePreferencesReporting() }
            }
        default:
            break
        }
    }

    // MARK: Audio server loss

    /// Swaps the lost pulsesink for a fake sink at the same position and keeps going; a background task waits for
    /// PulseAudio and swaps the view's stream back in. Coordinated, the loss is an audio-session interruption: the
    /// coordinator suspends the view and, when its end is published, catches it up with the group.
    private func audioOutputLost(_ reason: String) {
        guard case .pulse = configuration.audio, failure == nil else { return }
        let firstLoss = !audioOutputLost
        audioOutputLost = true
        reconnectingAudio = false
        if firstLoss {
            publish(.audioOutput(lost: true, reason: reason))
            if interceptor != nil { publish(.interruption(began: true)) }
        }
        let position = renderedMediaTime.latest ?? .zero
        let resume = targetState == .playing
        Task { await self.replaceAudioSink(pulse: false, at: position, resume: resume) }
        audioReconnect?.cancel()
        audioReconnect = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard case .pulse = AudioOutput.detect() else { continue }
                await self?.audioServerBack()
                return
            }
        }
    }

    private func audioServerBack() async {
        guard audioOutputLost, failure == nil else { return }
        let position = self.position ?? renderedMediaTime.latest ?? .zero
        reconnectingAudio = true
        await replaceAudioSink(pulse: true, at: position, resume: targetState == .playing)
        // An error of the new sink meanwhile sent us back to the fake sink (and to polling).
        guard reconnectingAudio, failure == nil else { return }
        reconnectingAudio = false
        audioOutputLost = false
        publish(.audioOutput(lost: false, reason: "PulseAudio answers again"))
    }

    private func replaceAudioSink(pulse: Bool, at position: ClockTime, resume: Bool) async {
        withdrawPendingStart()
        completeCoordinatedStart()
        guard failure == nil, case .pulse(let device) = configuration.audio else { return }
        _ = try? pipeline.setState(.null)
        currentState = .null
        do {
            let sink: Element
            if pulse {
                sink = try Player.makePulseSink(configuration, device: device)
            } else {
                sink = try Element(factory: "fakesink", name: "audiosink")
                try sink.set("sync", true)
            }
            try pipeline.set("audio-sink", sink)
            let rendered = renderedMediaTime
            if let pad = try? sink.staticPad("sink") {
                sinkProbes.append(pad.addProbe(.buffer) { info in
                    if let pts = info.pts { rendered.record(pts + (info.duration ?? .zero)) }
                    return .ok
                })
            }
            if audioFollowsSharedClock, let pulseSink = currentPulseSink()?.pulse {
                followSharedClock(pulseSink)
            }
            try await changeState(to: .paused, timeout: .seconds(20))
            try await flushingSeek(to: position, rate: rate, flags: [.flush, .accurate], timeout: .seconds(20))
            if interceptor != nil {
                // The coordinator rejoins the group (catch-up) when the interruption ends.
                publish(.interruption(began: false))
            } else if resume {
                try await changeState(to: .playing, timeout: .seconds(20))
            }
        } catch let error as PlayerError {
            fail(error)
        } catch {
            fail(PlayerError(view: view, cause: .output("cannot replace the audio output: \(error)")))
        }
    }

    private func updateMediaInfo(_ streams: [BusMessage.StreamInfo]) {
        var info = ViewMediaInfo()
        for stream in streams {
            guard let capsText = stream.caps, let caps = try? Caps(capsText), let s = caps.structure() else { continue }
            switch stream.kind {
            case .video where info.width == nil:
                info.width = s.int("width")
                info.height = s.int("height")
                info.frameRate = s.double("framerate")
                info.videoCodec = stream.codec
            case .audio where info.audioCodec == nil:
                info.audioCodec = stream.codec
                info.audioChannels = s.int("channels")
            default:
                break
            }
        }
        if info != mediaInfo && (info.width != nil || info.audioCodec != nil) {
            mediaInfo = info
            publish(.mediaInfo(info))
        }
    }
}

/// The latest media time seen by a view's sinks. Pad probes write it on streaming threads; the Mutex owns it.
/// When video last reached the view's sink, and how long its frames last. Written by the sink pad's streaming
/// thread, read by the `Player` actor; one `Mutex`.
final class VideoFlow: Sendable {
    private struct State {
        var lastArrival: ContinuousClock.Instant?
        var frameDuration: Duration = .milliseconds(40)
    }
    private let state = Mutex(State())

    func arrived(frameDuration: ClockTime?) {
        let now = ContinuousClock.now
        state.withLock {
            $0.lastArrival = now
            if let frameDuration, frameDuration.nanoseconds > 0 {
                $0.frameDuration = .nanoseconds(Int64(frameDuration.nanoseconds))
            }
        }
    }

    /// Forgets the last arrival: `sinceLastArrival` is nil until the next frame.
    func rearm() { state.withLock { $0.lastArrival = nil } }

    var sinceLastArrival: Duration? { state.withLock { $0.lastArrival.map { ContinuousClock.now - $0 } } }
    var frameDuration: Duration { state.withLock { $0.frameDuration } }
}

final class RenderedMediaTime: Sendable {
    private let value = Mutex<ClockTime?>(nil)
    func record(_ time: ClockTime) { value.withLock { if $0 == nil || $0! < time { $0 = time } } }
    func reset() { value.withLock { $0 = nil } }
    var latest: ClockTime? { value.withLock { $0 } }
}

/// Keeps the deinterleaving multiqueues of a pipeline (decodebin3's: `use-buffering` off) at a minimum
/// `min-interleave-time`.
///
/// Why: decodebin3 sizes its multiqueue from the streams' measured interleave, and its `min-interleave-time` read
/// back ~166 ms here (below GStreamer's own 250 ms default; decodebin3 lowers it). After a seek, one of a view's
/// queues filled up at that limit while the other ran dry, the demuxer blocked on the full one, and the view
/// stalled for good: its next pause never prerolled (about one
/// 4-view "seek, play, pause" in two or three, grid or headless). Each lowering is answered at once by raising
/// the value back to the floor; a second of compressed data per stream is the cost. Buffering queues (network
/// sources, `use-buffering` on) are sized by their own buffer duration and left alone.
///
/// Threading: `watch` runs on the thread that builds the player or on the streaming thread that adds a
/// multiqueue; the notify handler on the thread that changed the property. The connections live in a Mutex.
final class MultiqueueFloor: Sendable {
    private let minimumNs: Int
    private let connections = Mutex<[SignalConnection]>([])

    init(minimum: Duration) { minimumNs = Int(ClockTime(minimum).nanoseconds) }

    func watch(_ queue: Element) {
        guard (try? queue.get("use-buffering", as: Bool.self)) != true else { return }
        let minimum = minimumNs
        MultiqueueFloor.raise(queue, to: minimum)
        // The handler gets the queue as its instance argument (capturing it would keep it alive forever).
        if let connection = try? queue.connect("notify::min-interleave-time", { args in
            if let queue = args.element(at: 0) { MultiqueueFloor.raise(queue, to: minimum) }
        }) {
            connections.withLock { $0.append(connection) }
        }
    }

    private static func raise(_ queue: Element, to minimum: Int) {
        guard let current = try? queue.get("min-interleave-time", as: Int.self), current < minimum else { return }
        try? queue.set("min-interleave-time", minimum)
    }
}
