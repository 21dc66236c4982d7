import GStreamer
import Synchronization

/// A value shared with streaming threads; the Mutex inside is its owner.
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

/// The latest media time seen by a view's sinks. Pad probes write it on streaming threads; the Mutex owns it.
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
