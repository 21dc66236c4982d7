import CGStreamer
import Synchronization

/// An owned `GstPad`.
public final class Pad: ObjectRef, @unchecked Sendable {
    public var pad: UnsafeMutablePointer<GstPad> {
        UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstPad.self)
    }

    public var name: String { gstObjectName(gobject) ?? "" }

    /// The negotiated caps, if any.
    public var currentCaps: Caps? {
        guard let raw = gst_pad_get_current_caps(pad) else { return nil }
        return Caps(takingOwnershipOf: raw)
    }

    /// What the pad (and what is behind it) can take now: the answer to a caps query, nil when the query fails.
    /// Unlike `gst_pad_query_caps`, a failed query is not turned into ANY.
    public func queryCaps() -> Caps? {
        guard let query = gst_query_new_caps(nil) else { return nil }
        defer { gst_query_unref(query) }
        guard gst_pad_query(pad, query) != 0 else { return nil }
        var result: UnsafeMutablePointer<GstCaps>?
        gst_query_parse_caps_result(query, &result)
        // The query owns its result: take a reference of our own.
        guard let result, let owned = gst_caps_ref(result) else { return nil }
        return Caps(takingOwnershipOf: owned)
    }

    /// Sends an end-of-stream event into this pad, as if its upstream had pushed one; false when the pad refused
    /// it (flushing, or already at the end).
    @discardableResult
    public func sendEndOfStream() -> Bool { gst_pad_send_event(pad, gst_event_new_eos()) != 0 }

    /// Installs a probe; it stays installed while the returned token lives.
    /// The closure runs on a streaming thread: hand work over, do not block.
    public func addProbe(_ kind: PadProbeKind,
                         _ body: @escaping @Sendable (PadProbeInfo) -> PadProbeReturn) -> PadProbe {
        let handler = PadProbe.Handler(body)
        let box = Unmanaged.passRetained(handler).toOpaque()
        let id = gst_pad_add_probe(pad, GstPadProbeType(rawValue: kind.rawValue), PadProbe.trampoline, box,
                                   PadProbe.destroy)
        return PadProbe(pad: self, id: id, handler: handler)
    }
}

/// Which data a pad probe sees.
public struct PadProbeKind: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let buffer = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue)
    public static let bufferList = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
    public static let eventDownstream = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue)
    /// Events going upstream from the pad (seeks, QoS).
    public static let eventUpstream = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_EVENT_UPSTREAM.rawValue)
    /// Flush start / stop events (only delivered to probes that ask for them).
    public static let eventFlush = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue)
    public static let blocking = PadProbeKind(rawValue: GST_PAD_PROBE_TYPE_BLOCK.rawValue)
}

public enum PadProbeReturn: Sendable {
    case ok, drop, remove, pass
    /// For a buffer: drop it and answer its push with FLUSHING, as a flushing pad would (the element that pushed
    /// it pauses its loop). Tests make GStreamer's start-up stall with it. For anything else the same as `drop`.
    case flushing
    var raw: GstPadProbeReturn {
        switch self {
        case .ok: return GST_PAD_PROBE_OK
        case .drop: return GST_PAD_PROBE_DROP
        case .remove: return GST_PAD_PROBE_REMOVE
        case .pass: return GST_PAD_PROBE_PASS
        case .flushing: return GST_PAD_PROBE_HANDLED
        }
    }
}

/// What a probe saw, copied into Swift values (the C data is only valid during the callback).
public struct PadProbeInfo: Sendable {
    /// Buffer timestamp (PTS) and duration, for buffer probes.
    public var pts: ClockTime?
    public var duration: ClockTime?
    /// Bytes of data in the buffer or buffer list (0 for events).
    public var size: Int = 0
    /// Event type name ("segment", "eos", …) for event probes.
    public var eventName: String?
    /// The event's sequence number (the events one seek causes share it), for event probes.
    public var eventSeqnum: UInt32?
    /// For a segment event: the playback rate it carries (rate × applied rate), so a probe can tell which
    /// timeline the buffers after it belong to.
    public var segmentRate: Double?
    /// For a TIME segment event: its start and stop in the buffers' timestamp domain (nil when unset). A sink
    /// synchronises a buffer that begins before `segmentStart` on the clipped start, not on its PTS.
    public var segmentStart: ClockTime?
    public var segmentStop: ClockTime?
    /// For a TIME segment event: the stream time of `segmentStart` (a buffer's stream time, for forward playback,
    /// is segmentTime + PTS − segmentStart: the position a player reports, whatever the container's timestamps).
    public var segmentTime: ClockTime?
}

/// Token of an installed pad probe: removes the probe when released.
public final class PadProbe: @unchecked Sendable {
    // Sendable: immutable after init; gst_pad_remove_probe is MT-safe.
    private let pad: Pad
    private let id: gulong
    private let handler: Handler

    init(pad: Pad, id: gulong, handler: Handler) { self.pad = pad; self.id = id; self.handler = handler }
    deinit {
        // A probe whose closure returned `.remove` is already gone; removing it again makes GStreamer warn.
        if id != 0 && !handler.removedByGStreamer.withLock({ $0 }) { gst_pad_remove_probe(pad.pad, id) }
    }

    final class Handler: Sendable {
        let body: @Sendable (PadProbeInfo) -> PadProbeReturn
        let removedByGStreamer = Mutex(false)
        init(_ body: @escaping @Sendable (PadProbeInfo) -> PadProbeReturn) { self.body = body }
    }

    static let trampoline: GstPadProbeCallback = { _, info, userData in
        guard let info, let userData else { return GST_PAD_PROBE_OK }
        let handler = Unmanaged<Handler>.fromOpaque(userData).takeUnretainedValue()
        var swiftInfo = PadProbeInfo()
        let type = info.pointee.type.rawValue
        if type & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0, let data = info.pointee.data {
            let buffer = data.assumingMemoryBound(to: GstBuffer.self)
            swiftInfo.pts = ClockTime(raw: buffer.pointee.pts)
            swiftInfo.duration = ClockTime(raw: buffer.pointee.duration)
            swiftInfo.size = Int(gst_buffer_get_size(buffer))
        } else if type & GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue != 0, let data = info.pointee.data {
            swiftInfo.size = Int(gst_buffer_list_calculate_size(OpaquePointer(data)))
        } else if type & (GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue | GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue
                          | GST_PAD_PROBE_TYPE_EVENT_UPSTREAM.rawValue) != 0,
                  let data = info.pointee.data {
            let event = data.assumingMemoryBound(to: GstEvent.self)
            swiftInfo.eventName = gst_event_type_get_name(event.pointee.type).map { String(cString: $0) }
            swiftInfo.eventSeqnum = UInt32(gst_event_get_seqnum(event))
            if event.pointee.type == GST_EVENT_SEGMENT {
                var segment: UnsafePointer<GstSegment>?
                gst_event_parse_segment(event, &segment)
                if let segment {
                    swiftInfo.segmentRate = segment.pointee.rate * segment.pointee.applied_rate
                    if segment.pointee.format == GST_FORMAT_TIME {
                        swiftInfo.segmentStart = ClockTime(raw: segment.pointee.start)
                        swiftInfo.segmentStop = ClockTime(raw: segment.pointee.stop)
                        swiftInfo.segmentTime = ClockTime(raw: segment.pointee.time)
                    }
                }
            }
        }
        let result = handler.body(swiftInfo)
        if result == .remove { handler.removedByGStreamer.withLock { $0 = true } }
        if result == .flushing {
            guard type & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0, let data = info.pointee.data else {
                return GST_PAD_PROBE_DROP
            }
            // HANDLED: the probe owns the buffer (unreffed here) and the push returns the info's flow.
            gst_mini_object_unref(data.assumingMemoryBound(to: GstMiniObject.self))
            info.pointee.data = nil
            info.pointee.ABI.abi.flow_ret = GST_FLOW_FLUSHING
        }
        return result.raw
    }

    static let destroy: GDestroyNotify = { userData in
        guard let userData else { return }
        Unmanaged<Handler>.fromOpaque(userData).release()
    }
}
