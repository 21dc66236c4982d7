import GStreamer
import Multiview
import Synchronization

/// Where a view stopped: the position of the last video frame that reached its video sink, for `recover` to
/// resume from.
///
/// Why not the position the manager polls while the view plays: a view whose server goes away plays its buffer
/// out and then fails, and a failed pipeline is taken down (no position left to ask for). The last poll that saw
/// it playing was up to one poll interval (500 ms) old, more on a loaded machine: the view came back 0.19-0.33 s
/// before where it had stopped (one run: polled 0.79 s, stopped past 1.00 s). A frame reaching the sink is the
/// next one shown, so this is exact to a frame however late the polls are.
///
/// A frame's PTS is not its position (HLS keeps the MPEG-TS timestamps: 63 s for a position of 1 s). Within one
/// segment the two differ by a constant, which each poll of a playing view measures: position − PTS of the latest
/// frame. That is the constant give or take the frame being shown (the sink may be waiting on the latest frame or
/// showing it), so the largest difference seen in the segment is it within a frame (a poll that reads a newer frame
/// than its position gives less); a new segment (a seek, a reload) forgets it. A frame that begins before the
/// segment start counts from the start (the sink shows it from there). A reload starts a new segment: `recover`
/// reads where the view stopped before it reloads.
///
/// Threading: the probe writes on the sink's streaming thread, the manager's actor calibrates and reads; the
/// state is a `Mutex`.
final class ShownPosition: Sendable {
    private struct State {
        var segmentStart: ClockTime?
        /// PTS of the latest frame (ns).
        var latest: Int64?
        /// Position − PTS in the current segment (ns), nil until a poll measured it.
        var offset: Int64?
    }
    private let state = Mutex(State())
    private let probe = Mutex<PadProbe?>(nil)

    /// Follows the frames reaching `player`'s video sink; nothing when it has none (audio only: no position).
    func watch(_ player: Player) {
        guard let pad = try? player.videoSink()?.staticPad("sink") else { return }
        let added = pad.addProbe([.buffer, .eventDownstream]) { [weak self] info in
            guard let self else { return .ok }
            self.state.withLock { s in
                if info.eventName == "segment" {
                    s.segmentStart = (info.segmentRate ?? 1) > 0 ? info.segmentStart : nil
                    s.offset = nil
                    s.latest = nil
                } else if info.eventName == nil, let pts = info.pts {
                    s.latest = Int64(max(pts, s.segmentStart ?? pts).nanoseconds)
                }
            }
            return .ok
        }
        probe.withLock { $0 = added }
    }

    /// A playing view's position now: measures the segment's position − PTS difference.
    func calibrate(position: ClockTime) {
        state.withLock { s in
            guard let latest = s.latest else { return }
            let difference = Int64(position.nanoseconds) - latest
            s.offset = max(s.offset ?? difference, difference)
        }
    }

    /// The position of the latest frame (nil before a frame and a calibration in the current segment).
    var latest: ClockTime? {
        state.withLock { s in
            guard let latest = s.latest, let offset = s.offset, latest + offset >= 0 else { return nil }
            return ClockTime(nanoseconds: UInt64(latest + offset))
        }
    }
}
