import CGStreamer

// Pads as the player's stall handling needs them: the pads of an element, their streaming tasks, a seek sent into
// one; and the one GstIterator walk (`iteratedObjects`) that these and `Bin.descendants` use.

/// The state of the streaming task a pad runs (a queue's or a demuxer's loop), `GstTaskState`.
public enum PadTaskState: Sendable, Equatable {
    /// The pad runs no task (most pads: they are pushed into, they do not push on their own).
    case none
    case started
    /// The loop stopped itself: its last push returned a non-OK flow (FLUSHING, EOS, NOT_LINKED, an error).
    case paused
    case stopped
}

extension Pad {
    /// `gst_pad_get_task_state`, answered at once.
    public var taskState: PadTaskState {
        switch gst_pad_get_task_state(pad) {
        case GST_TASK_STARTED: .started
        case GST_TASK_PAUSED: .paused
        case GST_TASK_STOPPED: .stopped
        default: .none
        }
    }
}

extension Pad {
    /// Sends a time seek (to `position`, playing to the end) into this pad: from a source pad it travels upstream
    /// to what feeds the pad. False when nothing took it.
    public func sendSeek(rate: Double = 1.0, flags: Element.SeekFlags, position: ClockTime) -> Bool {
        guard let event = gst_event_new_seek(rate, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue),
                                             GST_SEEK_TYPE_SET, Int(bitPattern: UInt(position.nanoseconds)),
                                             GST_SEEK_TYPE_NONE, -1) else { return false }
        return gst_pad_send_event(pad, event) != 0
    }
}

extension Element {
    /// The element's pads (sink and source, static and requested or sometimes), in the element's order.
    public var pads: [Pad] { collectPads(gst_element_iterate_pads(element)) }

    /// The element's source pads.
    public var sourcePads: [Pad] { collectPads(gst_element_iterate_src_pads(element)) }

    private func collectPads(_ iterator: UnsafeMutablePointer<GstIterator>?) -> [Pad] {
        iteratedObjects(iterator) { Pad(borrowing: $0) }
    }
}

/// What `iterator` yields, each object made into `make`'s value (nil: left out); a resync starts over. Frees the
/// iterator. The objects are borrowed: `make` takes its own reference (`ObjectRef(borrowing:)`).
func iteratedObjects<T>(_ iterator: UnsafeMutablePointer<GstIterator>?,
                        _ make: (UnsafeMutableRawPointer) -> T?) -> [T] {
    guard let iterator else { return [] }
    defer { gst_iterator_free(iterator) }
    var found: [T] = []
    var value = GValue()
    while true {
        switch gst_iterator_next(iterator, &value) {
        case GST_ITERATOR_OK:
            if let raw = g_value_get_object(&value), let made = make(raw) { found.append(made) }
            g_value_reset(&value)
        case GST_ITERATOR_RESYNC:
            found.removeAll()
            gst_iterator_resync(iterator)
        default:
            g_value_unset(&value)
            return found
        }
    }
}

extension Bin {
    /// "element:pad" for every pad at any depth whose streaming task is paused (a loop that stopped on a non-OK
    /// flow), leaving out the elements made by the factories in `excluding` (typefind pauses its loop by design
    /// once it has found the type).
    public func pausedStreamingTasks(excluding factories: Set<String> = []) -> [String] {
        descendants { !factories.contains($0.factoryName ?? "") }.flatMap { element in
            element.pads.filter { $0.taskState == .paused }.map { "\(element.name):\($0.name)" }
        }
    }
}
