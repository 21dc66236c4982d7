import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import Synchronization

/// Records, for every video frame every view renders, the clock time of the render and the frame's media
/// time. It listens to fakesink's "handoff", which fires inside the sink's render call, after the sink has
/// waited for the frame's clock time — so the recorded time is when the frame was actually presented.
///
/// Threading: handoffs arrive on each view's streaming thread; the records, the current phase and rates live
/// in one `Mutex`.
public final class SyncRecorder: Sendable {
    private struct State {
        var frames: [FrameRecord] = []
        var phase = 0
        var rates: [Int: Double] = [:]
        var items: [Int: String] = [:]
    }
    private let state = Mutex(State())
    private let connections = Mutex<[Int: SignalConnection]>([:])
    public let clock: Clock

    public init(clock: Clock) { self.clock = clock }

    /// Starts recording a headless view (its video sink must be a fakesink). Throws when it is not.
    public func attach(_ player: Player, item: String) throws {
        let sink = try player.pipeline.get("video-sink", as: Element.self)
        guard sink.factoryName == "fakesink" else {
            throw GStreamerError.missingElement(factory: "fakesink (sync-report needs headless views)")
        }
        try sink.set("signal-handoffs", true)
        let view = player.view.number
        let clock = self.clock
        state.withLock { $0.items[view] = item; $0.rates[view] = $0.rates[view] ?? 1.0 }
        let connection = try sink.connect("handoff") { [weak self] args in
            let now = clock.time
            guard let self, let pts = args.bufferTimestamp(at: 1) else { return }
            self.state.withLock { s in
                s.frames.append(FrameRecord(view: view, mediaTimeNs: pts.nanoseconds, renderClockNs: now.nanoseconds,
                                            rate: s.rates[view] ?? 1.0, phase: s.phase, item: s.items[view] ?? ""))
            }
        }
        connections.withLock { $0[view] = connection }
    }

    public func detach(view: Int) { _ = connections.withLock { $0.removeValue(forKey: view) } }
    public func detachAll() { connections.withLock { $0.removeAll() } }

    public func setPhase(_ phase: Int) { state.withLock { $0.phase = phase } }
    /// Marks what a view plays from now on; a suspended view is marked apart so it is not compared with the
    /// group while it is detached on purpose.
    public func setItem(_ item: String, view: Int) { state.withLock { $0.items[view] = item } }
    public func setRate(_ rate: Double, view: Int) { state.withLock { $0.rates[view] = rate } }
    public func setRate(_ rate: Double) { state.withLock { s in for k in s.rates.keys { s.rates[k] = rate } } }

    public var frames: [FrameRecord] { state.withLock { $0.frames } }
    public var frameCount: Int { state.withLock { $0.frames.count } }
}
