import GStreamer
import Synchronization

/// What hlsdemux2 is told for one view. `connectionBitrate` 0 leaves the demuxer's own measurement in charge.
public struct DemuxerCaps: Sendable, Equatable {
    public var maxBitrate: Int
    public var connectionBitrate: Int
    /// How far ahead the demuxer downloads (its `high-watermark-time`, default 30 s): shorter means the link is
    /// shared continuously and a new cap shows within seconds instead of after 30 s of already-fetched media.
    public var bufferAhead: ClockTime
}

/// The hlsdemux2 of one view and the caps it must have. The demuxer appears on a streaming thread
/// (playbin3's "deep-element-added") and must get the caps right there, before it picks its first variant; the
/// manager changes the caps from its actor. The Mutex owns both.
final class DemuxerSlot: Sendable {
    private struct State {
        var demuxer: Element?
        var caps: DemuxerCaps?
    }
    private let state = Mutex(State())

    func adopt(_ demuxer: Element) {
        state.withLock { s in
            s.demuxer = demuxer
            if let caps = s.caps { Self.apply(caps, to: demuxer) }
        }
    }

    func release(_ element: Element) {
        state.withLock { s in if s.demuxer?.gobject == element.gobject { s.demuxer = nil } }
    }

    func setCaps(_ caps: DemuxerCaps?) {
        state.withLock { s in
            guard s.caps != caps else { return }
            s.caps = caps
            if let caps, let demuxer = s.demuxer { Self.apply(caps, to: demuxer) }
        }
    }

    var demuxer: Element? { state.withLock { $0.demuxer } }

    private static func apply(_ caps: DemuxerCaps, to demuxer: Element) {
        try? demuxer.set("max-bitrate", caps.maxBitrate)
        try? demuxer.set("connection-bitrate", caps.connectionBitrate)
        try? demuxer.set("high-watermark-time", Int(caps.bufferAhead.nanoseconds))
    }
}
