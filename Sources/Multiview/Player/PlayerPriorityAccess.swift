import CGStreamer
import GStreamer
import Synchronization

/// What the priority layer needs from a view beyond `PlayerElementAccess`: the bytes its HLS downloads deliver,
/// as they arrive.
///
/// Where they are counted (measured on GStreamer 1.22): adaptivedemux2 downloads with its own HTTP helper (no
/// souphttpsrc to probe) and posts `adaptive-streaming-statistics` only for playlists and variant switches, not
/// per fragment. What it downloads it pushes, chunk by chunk as it arrives (up to 32 KB, a shorter last chunk per
/// transfer), into one `parsebin` per stream inside the demuxer. A buffer probe on those parsebins' sink pads sees
/// every downloaded media byte, stamped when it arrives.
extension Player {
    /// Calls `body(stream, bytes)` for every chunk of media this view's adaptive demuxers (hlsdemux2, dashdemux2)
    /// download, on the demuxer's thread right when the chunk arrives (the caller stamps the time; it must not
    /// block). `stream` numbers the demuxer's download streams (video, each audio rendition) from 0 in the order
    /// they appear: chunks of one stream come one transfer after another. Keep the returned watch: releasing it
    /// removes the probes.
    public nonisolated func watchDownloadedBytes(_ body: @escaping @Sendable (_ stream: Int, _ bytes: Int) -> Void) throws -> DownloadWatch {
        let watch = DownloadWatch(body)
        watch.connections = try watchElements(
            added: { [weak watch] element in
                guard let watch, element.factoryName == "parsebin", DownloadWatch.isInsideAdaptiveDemuxer(element),
                      let pad = try? element.staticPad("sink") else { return }
                watch.probe(pad, of: element)
            },
            removed: { [weak watch] element in
                guard let watch, element.factoryName == "parsebin" else { return }
                watch.forget(element)
            })
        return watch
    }
}

/// The probes of `Player.watchDownloadedBytes`. Releasing it removes them and disconnects the element watch.
/// Threading: the probed pads (and their probe ids) are owned by a Mutex; they are added and removed on the
/// streaming threads that add or remove a parsebin, and released with the watch.
public final class DownloadWatch: Sendable {
    private struct Probed: Sendable {
        let pad: Pad
        let id: gulong
        /// The parsebin's address, to find its probe when it is removed (compared, never dereferenced).
        let owner: UInt
    }
    final class Counter: Sendable {
        let stream: Int
        let body: @Sendable (Int, Int) -> Void
        init(stream: Int, _ body: @escaping @Sendable (Int, Int) -> Void) { self.stream = stream; self.body = body }
    }
    private let body: @Sendable (Int, Int) -> Void
    /// The probed pads and how many streams were numbered so far.
    private let probes = Mutex<(list: [Probed], streams: Int)>(([], 0))
    private let connectionStore = Mutex<[SignalConnection]>([])

    init(_ body: @escaping @Sendable (Int, Int) -> Void) { self.body = body }

    fileprivate var connections: [SignalConnection] {
        get { connectionStore.withLock { $0 } }
        set { connectionStore.withLock { $0 = newValue } }
    }

    deinit {
        connectionStore.withLock { $0 = [] }
        for probed in probes.withLock({ $0.list }) { gst_pad_remove_probe(probed.pad.pad, probed.id) }
    }

    /// A parsebin whose parent is an adaptive demuxer is one of its per-stream parsers (playbin3's own parsebins
    /// sit in urisourcebin/decodebin3).
    fileprivate static func isInsideAdaptiveDemuxer(_ element: Element) -> Bool {
        guard let parent = gst_object_get_parent(UnsafeMutableRawPointer(element.gobject).assumingMemoryBound(to: GstObject.self))
        else { return false }
        defer { gst_object_unref(parent) }
        let name = Element.borrowing(UnsafeMutableRawPointer(parent).assumingMemoryBound(to: GstElement.self)).factoryName
        return name == "hlsdemux2" || name == "dashdemux2" || name == "mssdemux2"
    }

    fileprivate func probe(_ pad: Pad, of element: Element) {
        let stream = probes.withLock { state in defer { state.streams += 1 }; return state.streams }
        let box = Unmanaged.passRetained(Counter(stream: stream, body)).toOpaque()
        let kinds = GST_PAD_PROBE_TYPE_BUFFER.rawValue | GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue
        let id = gst_pad_add_probe(pad.pad, GstPadProbeType(rawValue: kinds), Self.trampoline, box, Self.release)
        guard id != 0 else { return }
        probes.withLock { $0.list.append(Probed(pad: pad, id: id, owner: UInt(bitPattern: element.gobject))) }
    }

    fileprivate func forget(_ element: Element) {
        let key = UInt(bitPattern: element.gobject)
        let gone = probes.withLock { state -> [Probed] in
            let gone = state.list.filter { $0.owner == key }
            state.list.removeAll { $0.owner == key }
            return gone
        }
        for probed in gone { gst_pad_remove_probe(probed.pad.pad, probed.id) }
    }

    private static let trampoline: GstPadProbeCallback = { _, info, userData in
        guard let info, let userData, let data = info.pointee.data else { return GST_PAD_PROBE_OK }
        let counter = Unmanaged<Counter>.fromOpaque(userData).takeUnretainedValue()
        let type = info.pointee.type.rawValue
        var bytes = 0
        if type & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 {
            bytes = Int(gst_buffer_get_size(data.assumingMemoryBound(to: GstBuffer.self)))
        } else if type & GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue != 0 {
            bytes = Int(gst_buffer_list_calculate_size(OpaquePointer(data)))
        }
        if bytes > 0 { counter.body(counter.stream, bytes) }
        return GST_PAD_PROBE_OK
    }

    private static let release: GDestroyNotify = { userData in
        guard let userData else { return }
        Unmanaged<Counter>.fromOpaque(userData).release()
    }
}
