import GStreamer
import Synchronization

/// The narrow ways other layers reach inside a view's pipeline. Nothing outside `Multiview` touches a player's
/// `Pipeline` itself: what priority, sync measurement and remote control need is here, named for what it is.
///
/// Everything here is `nonisolated`: the pipeline's own calls are thread-safe, and the callers (pad probes,
/// signal handlers, a D-Bus property read) must not wait for the player's actor.
extension Player {
    /// Calls `added` / `removed` for every element added to or removed from this view's pipeline at any depth
    /// (a demuxer created when the media is opened, a multiqueue). The handlers run on the thread that changes
    /// the pipeline (often a streaming thread) and must not block. Keep the returned connections: releasing them
    /// disconnects.
    public nonisolated func watchElements(added: @escaping @Sendable (Element) -> Void,
                                          removed: @escaping @Sendable (Element) -> Void) throws -> [SignalConnection] {
        let onAdded = try pipeline.connect("deep-element-added") { args in
            if let element = args.element(at: 2) { added(element) }
        }
        let onRemoved = try pipeline.connect("deep-element-removed") { args in
            if let element = args.element(at: 2) { removed(element) }
        }
        return [onAdded, onRemoved]
    }

    /// Calls `body` with each source element playbin3 creates (its "source-setup"), on the thread that creates it.
    public nonisolated func watchSourceSetup(_ body: @escaping @Sendable (Element) -> Void) throws -> SignalConnection {
        try pipeline.connect("source-setup") { args in
            if let source = args.element(at: 1) { body(source) }
        }
    }

    /// The pipeline's position now (not waiting for the actor), nil before it has one.
    public nonisolated func queryPosition() -> ClockTime? { pipeline.queryPosition() }

    /// The media's duration as the pipeline answers it now (not waiting for the actor), nil before it knows.
    public nonisolated func queryDuration() -> ClockTime? { pipeline.queryDuration() }

    /// The pipeline's current GStreamer state, read from the pipeline itself.
    public nonisolated var pipelineState: ElementState { pipeline.currentState }

    /// The element playbin3 renders video into (our sink or sink bin), nil for a view without video output.
    public nonisolated func videoSink() -> Element? { try? pipeline.get("video-sink", as: Element.self) }

    /// The caps of the video reaching the video sink (the shown resolution), nil before the first frame.
    public nonisolated func videoSinkCaps() -> Caps? { try? videoSink()?.staticPad("sink").currentCaps }

    /// Runs this (uncoordinated) pipeline on `clock` — for measurements that compare views on one clock without
    /// coordinating them (the sync-report baseline). Coordinated views use `adoptClock` instead.
    public nonisolated func measure(on clock: Clock) { pipeline.useClock(clock) }

    /// Element messages (`GST_MESSAGE_ELEMENT`, e.g. adaptivedemux2's `adaptive-streaming-statistics`) posted in
    /// this view's pipeline, in bus order, delivered on the player's actor as they are handled. The returned
    /// token stops delivery when released.
    public nonisolated func watchElementMessages(
        _ body: @escaping @Sendable (_ source: BusMessage.Source, _ structure: Structure) -> Void
    ) -> ElementMessageWatch {
        elementMessageWatchers.add(body)
    }
}

/// A registration of `Player.watchElementMessages`; releasing it unregisters the handler.
public final class ElementMessageWatch: Sendable {
    private let watchers: ElementMessageWatchers
    private let id: Int
    init(watchers: ElementMessageWatchers, id: Int) { self.watchers = watchers; self.id = id }
    deinit { watchers.remove(id) }
}

/// The handlers of a player's element messages. Registered from any thread, called by the player's actor; the
/// Mutex owns the list.
final class ElementMessageWatchers: Sendable {
    typealias Handler = @Sendable (BusMessage.Source, Structure) -> Void
    private let state = Mutex<(next: Int, handlers: [Int: Handler])>((0, [:]))

    func add(_ handler: @escaping Handler) -> ElementMessageWatch {
        let id = state.withLock { s in
            let id = s.next
            s.next += 1
            s.handlers[id] = handler
            return id
        }
        return ElementMessageWatch(watchers: self, id: id)
    }

    func remove(_ id: Int) { state.withLock { _ = $0.handlers.removeValue(forKey: id) } }

    func deliver(_ source: BusMessage.Source, _ structure: Structure) {
        let handlers = state.withLock { Array($0.handlers.values) }
        for handler in handlers { handler(source, structure) }
    }
}
