import CGStreamer
import Synchronization

/// Each stream's language as the container tags it, read by demuxing without decoding (`parsebin` into fakesinks).
///
/// Why: `GstDiscoverer` reports what it has seen when its pipeline prerolls. A demuxer sends a stream's tags
/// (its language among them) just before that stream's first buffer, and a sparse stream such as subtitles may
/// not have sent them by then: the discoverer then reports no language (`multiview info` showed `und` for
/// angle3's English subtitles about 1 run in 15 under load). This pass waits for exactly what is missing: it
/// ends when every asked-for stream has shown a language code, or has passed its tags without one (its first
/// buffer went by), or at the end of the media, or at `timeout`.
///
/// Threading: synchronous on the caller's thread (like `MediaInfo.discover`); the pads come from parsebin's
/// "pad-added" on a streaming thread into `pads` (a Mutex); tags are read from the pads' sticky events, which
/// GStreamer guards itself.
enum StreamLanguageScan {
    /// Languages by stream id for the streams in `wanted` (nil: every stream) that have one (the others are left
    /// out).
    static func languages(uri: String, wanted: Set<String>?, timeout: Duration = .seconds(3)) -> [String: String] {
        guard wanted?.isEmpty != true else { return [:] }
        let quoted = uri.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        guard let pipeline = try? Pipeline.parseLaunch("urisourcebin uri=\"\(quoted)\" ! parsebin name=scan"),
              let parsebin = pipeline.child(named: "scan") else { return [:] }
        let scan = PadSet()
        guard let added = try? parsebin.connect("pad-added", { args in
            guard let pad = args.pad(at: 1) else { return }
            scan.add(pad, sinkInto: pipeline)
        }) else { return [:] }
        defer { withExtendedLifetime(added) {} }
        // Stopped (NULL) when the pipeline is released: Pipeline's deinit.
        guard (try? pipeline.setState(.playing)) != nil else { return [:] }

        let bus = gst_pipeline_get_bus(pipeline.pipeline)
        defer { if let bus { gst_object_unref(bus) } }
        let deadline = ContinuousClock.now + timeout
        var found: [String: String] = [:]
        while true {
            let (languages, settled, seen) = scan.read(wanted: wanted)
            found = languages
            if let wanted, settled.isSuperset(of: wanted) { break }
            if wanted == nil, !seen.isEmpty, settled == seen { break }
            // The end of the media (or an error) settles everything there is to see.
            let types = GstMessageType(GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
            if let message = gst_bus_timed_pop_filtered(bus, 20_000_000, types) {
                gst_message_unref(message)
                found = scan.read(wanted: wanted).languages
                break
            }
            if ContinuousClock.now >= deadline { break }
        }
        return found
    }

    /// parsebin's source pads, each drained into a fakesink, and whether a buffer went through each.
    final class PadSet: Sendable {
        private struct Entry: @unchecked Sendable {
            // Sendable: a GstPad reference (GstPad is MT-safe for the calls made here) plus a probe token.
            let pad: Pad
            let probe: PadProbe
        }
        private let entries = Mutex<[Entry]>([])
        private let sawBuffer = Mutex<Set<ObjectIdentifier>>([])

        func add(_ pad: Pad, sinkInto pipeline: Pipeline) {
            guard let sink = try? Element(factory: "fakesink") else { return }
            try? sink.set("sync", false)
            try? sink.set("async", false)
            guard (try? pipeline.add(sink)) != nil else { return }
            _ = gst_element_sync_state_with_parent(sink.element)
            if let sinkPad = try? sink.staticPad("sink") { _ = gst_pad_link(pad.pad, sinkPad.pad) }
            let key = ObjectIdentifier(pad)
            let probe = pad.addProbe(.buffer) { [weak self] _ in
                self?.sawBuffer.withLock { _ = $0.insert(key) }
                return .remove
            }
            entries.withLock { $0.append(Entry(pad: pad, probe: probe)) }
        }

        /// The languages found so far, the wanted streams that are settled (language seen, or a buffer passed
        /// after its tags without one) and the wanted streams seen at all.
        func read(wanted: Set<String>?) -> (languages: [String: String], settled: Set<String>, seen: Set<String>) {
            let buffered = sawBuffer.withLock { $0 }
            var languages: [String: String] = [:]
            var settled: Set<String> = []
            var seen: Set<String> = []
            for entry in entries.withLock({ $0 }) {
                guard let raw = gst_pad_get_stream_id(entry.pad.pad) else { continue }
                let id = String(cString: raw)
                g_free(raw)
                guard wanted?.contains(id) ?? true else { continue }
                seen.insert(id)
                if let language = Self.languageCode(on: entry.pad.pad) {
                    languages[id] = language
                    settled.insert(id)
                } else if buffered.contains(ObjectIdentifier(entry.pad)) {
                    settled.insert(id)
                }
            }
            return (languages, settled, seen)
        }

        /// GST_TAG_LANGUAGE_CODE from the tag events stuck on `pad` (a stream's tags and the global ones).
        private static func languageCode(on pad: UnsafeMutablePointer<GstPad>) -> String? {
            var index: guint = 0
            while let event = gst_pad_get_sticky_event(pad, GST_EVENT_TAG, index) {
                defer { gst_event_unref(event) }
                index += 1
                var tags: UnsafeMutablePointer<GstTagList>?
                gst_event_parse_tag(event, &tags)
                var value: UnsafeMutablePointer<gchar>?
                if let tags, gst_tag_list_get_string(tags, "language-code", &value) != 0, let value {
                    defer { g_free(value) }
                    return String(cString: value)
                }
            }
            return nil
        }
    }
}
