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
/// Threading: the probes (tokens that remove themselves when released) are owned by a Mutex; they are added and
/// removed on the streaming threads that add or remove a parsebin, and released with the watch.
public final class DownloadWatch: Sendable {
    private struct Probed: Sendable {
        let probe: PadProbe
        /// The parsebin's address, to find its probe when it is removed (compared, never dereferenced).
        let owner: UInt
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
        probes.withLock { $0.list = [] }
    }

    /// A parsebin whose parent is an adaptive demuxer is one of its per-stream parsers (playbin3's own parsebins
    /// sit in urisourcebin/decodebin3).
    fileprivate static func isInsideAdaptiveDemuxer(_ element: Element) -> Bool {
        let name = element.parent?.factoryName
        return name == "hlsdemux2" || name == "dashdemux2" || name == "mssdemux2"
    }

    fileprivate func probe(_ pad: Pad, of element: Element) {
        let stream = probes.withLock { state in defer { state.streams += 1 }; return state.streams }
        let body = self.body
        let probe = pad.addProbe([.buffer, .bufferList]) { info in
            if info.size > 0 { body(stream, info.size) }
            return .ok
        }
        probes.withLock { $0.list.append(Probed(probe: probe, owner: UInt(bitPattern: element.gobject))) }
    }

    fileprivate func forget(_ element: Element) {
        let key = UInt(bitPattern: element.gobject)
        // Released outside the lock: removing a probe may wait for the pad's streaming thread.
        let gone = probes.withLock { state -> [Probed] in
            let gone = state.list.filter { $0.owner == key }
            state.list.removeAll { $0.owner == key }
            return gone
        }
        withExtendedLifetime(gone) {}
    }
}
