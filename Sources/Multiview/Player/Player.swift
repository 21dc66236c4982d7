import Foundation
import GStreamer
import Synchronization

/// One view: a playbin3 pipeline of its own, the decisions about it (`PlayerStateMachine`) and the parts that
/// act on it — the builder (PlayerPipelineBuilder.swift), transport (Player+Transport.swift), the coordinated
/// start (Player+CoordinatedStart.swift), the audio output supervisor (Player+AudioOutput.swift), the starvation
/// watch (VideoStarvationWatch.swift), media info and languages (LanguageSelection.swift).
///
/// Threading: the actor owns all mutable state, the state machine included, and runs on a serial queue of its own
/// (`PlayerExecutor`), never on the cooperative pool. GStreamer posts bus messages on its streaming threads; the
/// bus's sync handler only copies them into an `AsyncStream`, and a task feeds them to the actor in order, where
/// they become state-machine inputs. State shared with streaming threads (rendered time,
/// video flow, real-time grant) lives in `Mutex`-owned boxes. Other layers reach the pipeline only through
/// PlayerElementAccess.swift; the coordination layer's start runs `PreparedSinkStart` without the actor.
public actor Player {
    public nonisolated let view: ViewIdentity
    /// The view's playbin3. Internal: other layers use the narrow API of PlayerElementAccess.swift.
    nonisolated let pipeline: Pipeline
    public nonisolated let configuration: PlayerConfiguration
    /// The actor's own serial queue (see `PlayerExecutor`: nothing the player blocks on runs on the cooperative pool).
    nonisolated let executor: PlayerExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let bus: Bus
    /// The caps filter fixing the size the video is scaled to (window output only): the tile's size.
    let tileSizeFilter: Element?
    /// The valve in front of the external display branch (nil without one); open = this view is on the external route.
    let externalValve: Element?
    /// Latest media time (buffer PTS + duration) that reached a sink, written by pad probes on streaming
    /// threads; a Mutex-protected box is its owner.
    let renderedMediaTime = RenderedMediaTime()
    /// Whether the kernel granted real-time scheduling to the video render thread (nil until it started, or
    /// when not requested). Written on that streaming thread; the Mutex is its owner.
    private nonisolated let realtimeGranted = LockedValue<Bool?>(nil)
    public nonisolated var realtimeRendering: Bool? { realtimeGranted.value }
    var sinkProbes: [PadProbe] = []
    /// Hands every multiqueue added after init to `multiqueueFloor`.
    private var multiqueueSetup: SignalConnection?
    private nonisolated let multiqueueFloor = MultiqueueFloor(minimum: Player.minimumInterleave)
    /// decodebin3 1.22.0's input faults (a crash at reset, elements left behind): see `DecodebinInputGuard`.
    nonisolated let inputGuard = DecodebinInputGuard()
    /// adaptivedemux2 1.22.0's abort after a flushing seek: see `AdaptiveDemuxFlushHold`.
    nonisolated let adaptiveDemuxHold: AdaptiveDemuxFlushHold
    /// Handlers of element messages (`watchElementMessages`, PlayerElementAccess.swift).
    nonisolated let elementMessageWatchers = ElementMessageWatchers()
    /// The least time a deinterleaving multiqueue holds per stream (its `min-interleave-time`).
    public static let minimumInterleave: Duration = .seconds(1)

    /// Whether the first start since the load may still be restarted (`restartStalledStart`).
    var startStall = StartStall()
    /// Every decision about states and status (pure; see `PlayerStateMachine`).
    var machine = PlayerStateMachine()
    var source: MediaSource?
    /// Frames reaching the video sink, the task watching them on `clock`, and the silence it measured.
    let videoFlow = VideoFlow()
    private var videoFlowWatch: Task<Void, Never>?
    private var videoSilence = VideoSilenceTracker()
    /// The clock of the player's own timers (the starvation watch, the error grace): injected for tests. Waits on
    /// the pipeline itself (preroll, seeks) run on real time, as GStreamer does.
    nonisolated let clock: any _Concurrency.Clock<Duration>
    var missingPlugins: [String] = []
    /// The media types whose decoders are missing (from the same messages).
    var missingDecoders: Set<String> = []
    public internal(set) var rate: Double = 1.0
    public internal(set) var mediaInfo = ViewMediaInfo()
    public internal(set) var failure: PlayerError?
    public var reachedEnd: Bool { machine.reachedEnd }
    public var hasPlayed: Bool { machine.hasPlayed }
    /// Video stopped reaching the sink while the source's buffering stands at 100 % (no buffering message below
    /// it): the stall is inside the pipeline, not the network's. Seen in the soak: PulseAudio stopped reading an HLS
    /// view's stream, its audio branch filled, and the demuxer's one output thread blocked on it, so the picture
    /// starved behind a full buffer. A flushing seek clears such a block (`PlayerCoordination` catches the view up).
    public var videoStarvedWithSourceBuffered: Bool { machine.videoStarved && machine.bufferingPercent >= 100 }

    /// Prints `text` as a note about this view (the stage shows notices as they come).
    public func notice(_ text: String) { publish(.notice("\(view): \(text)")) }
    weak var interceptor: (any TransportInterceptor)?

    /// Operations on the pipeline, one at a time (PlayerOperationQueue.swift).
    var operations = PlayerOperationQueue()
    /// The audio output supervisor's state (Player+AudioOutput.swift).
    var audio = AudioOutputState()
    /// The coordinated start's state (Player+CoordinatedStart.swift).
    var coordinated = CoordinatedStartState()

    /// The streams of the media (stream collection), what plays now (streams-selected) and the language wishes
    /// (LanguageSelection.swift).
    var streamCollection: [BusMessage.StreamInfo] = []
    /// The collection `streamCollection` came from (see `learnLanguagesTaggedSincePosted`).
    var liveStreamCollection: StreamCollection?
    var currentSelection: [BusMessage.StreamInfo] = []
    var languagePreferences = LanguagePreferences()

    private var subscribers: [Int: AsyncStream<PlayerEvent>.Continuation] = [:]
    private var nextSubscriberID = 0
    var asyncDoneWaiters = AsyncDoneWaiters()
    /// The NULL of the last failure, while it may still run (FailedPipelineTeardown.swift).
    private var failedTeardown: FailedPipelineTeardown?

    public init(configuration: PlayerConfiguration) throws {
        try self.init(configuration: configuration, clock: ContinuousClock())
    }

    init(configuration: PlayerConfiguration, clock: any _Concurrency.Clock<Duration>) throws {
        self.view = configuration.view
        self.configuration = configuration
        self.clock = clock
        self.executor = PlayerExecutor(label: "multiview.view\(configuration.view.number)")
        let built = try PlayerPipelineBuilder.build(configuration)
        let playbin = built.pipeline
        self.pipeline = playbin
        self.tileSizeFilter = built.tileSizeFilter
        self.adaptiveDemuxHold = try AdaptiveDemuxFlushHold(watching: playbin)
        self.externalValve = built.externalValve
        self.audio.pulseServer = built.pulseServer
        self.audio.sinkBin = built.audioSinkBin
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
                if !isVideo { probes.append(PlayerPipelineBuilder.keepStreamName(pad)) }
            }
        }
        self.sinkProbes = probes
        // Deinterleaving queues get a 1 s floor (MultiqueueFloor; later ones as added); decodebin3's inputs a guard.
        let floor = multiqueueFloor, inputs = inputGuard
        for queue in playbin.descendants(where: { $0.factoryName == "multiqueue" }) { floor.watch(queue) }
        self.multiqueueSetup = try? playbin.connect("deep-element-added") { args in
            guard let element = args.element(at: 2) else { return }
            if element.factoryName == "multiqueue" { floor.watch(element) }
            if element.factoryName == "identity", let bin = args.element(at: 1), bin.factoryName == "decodebin3" {
                inputs.watch(identity: element, in: bin)
            }
        }
        self.bus = playbin.bus()
        let granted = realtimeGranted
        let messages = bus.messages(realtime: configuration.realtimeVideoRendering
            ? RealtimeStreamThreads(owners: ["vqueue"]) { _, ok in granted.value = ok } : nil)
        Task(executorPreference: executor) { [weak self] in
            for await message in messages {
                guard let self else { return }
                await self.handle(message)
            }
        }
    }

    deinit {
        audio.reconnect?.cancel()
        audio.replacementTask?.cancel()
        videoFlowWatch?.cancel()
        for (_, c) in subscribers { c.finish() }
        asyncDoneWaiters.wakeAll(with: CancellationError())
    }

    // MARK: Events

    /// A new stream of this player's events (each subscriber gets every event from now on).
    public func events() -> AsyncStream<PlayerEvent> {
        let (stream, continuation) = AsyncStream<PlayerEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextSubscriberID
        nextSubscriberID += 1
        subscribers[id] = continuation
        continuation.yield(.status(machine.status))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id) }
        }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    func publish(_ event: PlayerEvent) {
        for (_, c) in subscribers { c.yield(event) }
    }

    public var currentStatus: PlayerStatus { machine.status }

    /// The media loaded last (nil before `load`).
    public var loadedSource: MediaSource? { source }

    // MARK: The state machine and its actions

    /// Feeds one input to the state machine and performs what it decides, in order.
    func apply(_ input: PlayerStateMachine.Input) {
        for action in machine.apply(input) {
            switch action {
            case .setPipelineState(let state): requestPipelineState(state)
            case .armAudioClockGuard: audio.clockGuard?.arm()
            case .publishStatus(let status): publish(.status(status))
            case .publishInterruption(let began): publish(.interruption(began: began))
            case .rearmVideoWatch: rearmVideoFlowWatch()
            }
        }
    }

    /// A state change the machine decided on (a buffering hold, a clock re-selection, a cork, a stop). Nothing
    /// waits for it, but its result is handled: a refusal means the pipeline is broken; the bus then carries the
    /// classified cause, and the view fails with it or, when none comes within `errorGrace`, with the refusal.
    private func requestPipelineState(_ state: ElementState) {
        // A dead daemon's stream is replaced (and the view resumed by the replacement), never played.
        if state == .playing && !pulseStreamIsCurrent() { return }
        // A failed view's NULL runs off this queue: GStreamer's teardown can deadlock (FailedPipelineTeardown).
        if state == .null && failure != nil { tearDownFailedPipeline(); return }
        do {
            switch try pipeline.setState(state) {
            case .success, .async, .noPreroll:
                if state == .null { Player.pipelineReachedNull(pipeline, inputs: inputGuard) }
                // A buffering hold or a cork corked the stream: noted as `changeState` notes its stops.
                if state == .paused { audio.clockGuard?.noteStopped() }
            }
        } catch {
            guard failure == nil else { return }
            if state == .null {
                // Taking a pipeline down cannot be refused by our elements; say so if it ever is.
                publish(.warning("\(view): the pipeline refused to stop (\(error))"))
                return
            }
            failSoon(PlayerError(view: view, cause: .stateChangeFailed(to: state)))
        }
    }

    /// What follows every NULL of the view's pipeline, on whichever queue took it there: the decodebin3 inputs
    /// it left are cleared, and what it freed goes back to the system (`HeapTrimmer`).
    nonisolated static func pipelineReachedNull(_ pipeline: Pipeline, inputs: DecodebinInputGuard) {
        inputs.pipelineStopped(pipeline)
        HeapTrimmer.shared.request()
    }

    /// Takes a failed view's pipeline to NULL on a queue of its own and, when that is still running after
    /// `FailedPipelineTeardown.deadline`, says so. One at a time: while one runs, the pipeline is on its way to NULL.
    private func tearDownFailedPipeline() {
        if let running = failedTeardown, !running.isFinished { return }
        let pipeline = self.pipeline, inputs = inputGuard, view = self.view
        let teardown = FailedPipelineTeardown(pipeline: pipeline, view: view) {
            Player.pipelineReachedNull(pipeline, inputs: inputs)
        }
        failedTeardown = teardown
        // Real time, as every wait on the pipeline itself (not the injected clock of the player's own timers).
        Task(executorPreference: executor) { [weak self] in
            try? await Task.sleep(for: FailedPipelineTeardown.deadline)
            guard !teardown.isFinished, let self else { return }
            await self.publish(.warning("\(view): its pipeline did not stop within \(FailedPipelineTeardown.deadline) " +
                                        "of the failure (a GStreamer teardown deadlock); the view cannot be loaded again"))
        }
    }

    /// Before a failed view is loaded again: its NULL must be done (waited for up to the deadline, on this queue).
    func finishFailedTeardown() throws(PlayerError) {
        guard let teardown = failedTeardown else { return }
        guard teardown.waitFinished(timeout: FailedPipelineTeardown.deadline) else {
            throw PlayerError(view: view, cause: .pipelineStuck(
                "the pipeline of the failed media did not stop within \(FailedPipelineTeardown.deadline)"))
        }
        failedTeardown = nil
    }

    /// How long the bus gets to deliver the error behind a refused state change before the refusal itself is the
    /// cause (the element posts its error before it refuses, but the message may still be in the bus's queue).
    static let errorGrace: Duration = .seconds(2)

    /// Fails with `error` unless the bus's own error (classified) arrives within `errorGrace`.
    /// A lost PulseAudio stream's refusal is not a failure (`audioOutputLossExplainsRefusal`).
    func failSoon(_ error: PlayerError) {
        let clock = self.clock, losses = audio.replacements.losses
        Task(executorPreference: executor) { [weak self] in
            try? await clock.sleep(for: Player.errorGrace)
            await self?.failUnlessAudioOutputLoss(error, since: losses)
        }
    }

    private func failUnlessAudioOutputLoss(_ error: PlayerError, since losses: Int) {
        if !audioOutputLossExplainsRefusal(since: losses) { fail(error) }
    }

    // MARK: Bus messages

    private func handle(_ message: BusMessage) {
        completeCoordinatedStart()
        switch message {
        case .error(let info) where configuration.audio != .fakeSink && AudioSinkReplacements.isStreamLoss(info):
            // PulseAudio went away (stopped, restarted): the view plays on without sound instead of failing.
            // Later errors of the lost sink (it posts several) change nothing.
            if !audio.outputLost || audio.reconnecting { audioOutputLost(info.message) }
        case .error(let info):
            let media = source ?? MediaSource("")
            let cause = PlayerError.classify(info, source: media, fileAccess: PlayerError.fileAccess(of: media),
                                             missingPlugins: missingPlugins)
            fail(PlayerError(view: view, cause: cause, underlying: info))
        case .warning(let info):
            publish(.warning(info.message))
        case .missingPlugin(_, let description, let mediaType):
            missingPlugins.append(description)
            if let mediaType { missingDecoders.insert(mediaType) }
            failIfNothingDecodes()
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
            apply(.endOfStream)
            publish(.endOfStream)
        case .stateChanged(let source, _, let new, _) where source.isPipeline:
            apply(.stateChanged(new))
        case .asyncDone(let source, _) where source.isPipeline:
            resumeWaiters()
            applyLanguagePreferencesReporting()
        case .buffering(_, let percent):
            apply(.buffering(percent: percent))
        case .clockLost:
            apply(.clockLost)
        case .requestState(_, let state):
            apply(.requestState(state, coordinated: interceptor != nil))
        case .streamCollection(_, let streams, let live):
            learnStreams(streams, live: live)
            failIfNothingDecodes()
            // Selecting while prerolling can stall the preroll (pulsesink): wishes wait for the first ASYNC_DONE.
            if machine.current >= .paused { applyLanguagePreferencesReporting() }
        case .streamsSelected(_, let streams):
            updateMediaInfo(streams)
            currentSelection = streams
            // Language tags can reach the streams after the collection was posted: learn them here, and try the
            // wishes again if that made a difference.
            let merged = mergingLanguages(into: streamCollection, from: streams)
            if merged != streamCollection {
                streamCollection = merged
                if machine.current >= .paused { applyLanguagePreferencesReporting() }
            }
        default:
            break
        }
    }

    /// Fails at once when no audio or video stream of the media can be decoded (see `undecodableMedia`).
    private func failIfNothingDecodes() {
        guard failure == nil, let cause = PlayerError.undecodableMedia(
            streams: streamCollection, missingDecoders: missingDecoders, missingPlugins: missingPlugins) else { return }
        fail(PlayerError(view: view, cause: cause))
    }

    func fail(_ error: PlayerError) {
        guard failure == nil else { return }
        withdrawPendingStart()
        failure = error
        apply(.failed)
        publish(.failed(error))
        resumeWaiters(with: error)
    }

    // MARK: Starved video

    /// Watches video arrivals from now on: the frames before this call no longer count, and the silence is counted
    /// from the next frame or, for media that showed video, from when the view is next watched (see
    /// `VideoSilenceTracker`; audio-only media, a seek's preroll and the wait for a coordinated start are not starvation).
    private func rearmVideoFlowWatch() {
        videoFlow.rearm()
        guard videoFlowWatch == nil else { return }
        videoFlowWatch = VideoStarvationWatch.start(flow: videoFlow, clock: clock, on: executor) { [weak self] flow, time in
            guard let self else { return false }
            await self.judgeVideoFlow(flow, at: time)
            return true
        }
    }

    /// One tick of the watch: the silence (VideoSilenceTracker) and the verdict (StarvationVerdict) become a
    /// state-machine input.
    private func judgeVideoFlow(_ flow: VideoFlow.Snapshot, at time: Duration) {
        let watching = machine.watchesVideoFlow
        let silence = videoSilence.observe(flow, at: time, watching: watching)
        if let input = StarvationVerdict.judge(silence: silence, frameDuration: flow.frameDuration,
                                               starved: machine.videoStarved, watching: watching) {
            apply(input)
        }
    }
}
