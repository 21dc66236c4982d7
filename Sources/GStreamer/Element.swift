import CGStreamer

/// An owned `GstElement`.
public class Element: ObjectRef, @unchecked Sendable {
    public var element: UnsafeMutablePointer<GstElement> {
        UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstElement.self)
    }

    /// Makes an element from its factory; throws `.missingElement` when the plugin is not installed.
    public convenience init(factory: String, name: String? = nil) throws {
        guard GStreamer.ensureInitialized() else { throw GStreamerError.initializationFailed }
        guard let raw = gst_element_factory_make(factory, name) else {
            throw GStreamerError.missingElement(factory: factory)
        }
        self.init(takingOwnershipOf: raw)
    }

    /// Wraps an element pointer without taking over the caller's reference.
    public static func borrowing(_ pointer: UnsafeMutablePointer<GstElement>) -> Element {
        Element(borrowing: pointer)
    }

    public var name: String { gstObjectName(gobject) ?? "" }

    /// The name of the factory that made it ("x264enc"), or nil.
    public var factoryName: String? { gstFactoryName(ofElement: gobject) }

    /// The bin this element sits in (a new owner of it), nil for a top-level element.
    public var parent: Element? {
        guard let raw = gst_object_get_parent(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstObject.self))
        else { return nil }
        // gst_object_get_parent returns a new reference: the wrapper takes it over.
        return Element(takingOwnershipOf: UnsafeMutableRawPointer(raw))
    }

    /// This element as a `Bin` when it is one (a second owner of the same object), else nil.
    public func asBin() -> Bin? {
        guard g_type_check_instance_is_a(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_bin_get_type()) != 0 else { return nil }
        return Bin(borrowing: gobject)
    }

    // MARK: State

    @discardableResult
    public func setState(_ state: ElementState) throws -> StateChangeResult {
        switch gst_element_set_state(element, state.raw) {
        case GST_STATE_CHANGE_SUCCESS: return .success
        case GST_STATE_CHANGE_ASYNC: return .async
        case GST_STATE_CHANGE_NO_PREROLL: return .noPreroll
        default: throw GStreamerError.stateChangeFailed(element: name, target: state)
        }
    }

    /// The current state without waiting for a pending change.
    public var currentState: ElementState {
        var current = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        gst_element_get_state(element, &current, &pending, 0)
        return ElementState(current)
    }

    /// True while an asynchronous state change (preroll, or the lost state of a flushing seek) is still pending.
    /// Answers at once (no wait).
    public var isStateChangePending: Bool {
        var current = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        return gst_element_get_state(element, &current, &pending, 0) == GST_STATE_CHANGE_ASYNC
    }

    /// True when the last state change failed (an element refused it, e.g. typefind found no known format).
    /// Answers at once (no wait).
    public var stateChangeFailed: Bool {
        var current = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        return gst_element_get_state(element, &current, &pending, 0) == GST_STATE_CHANGE_FAILURE
    }

    /// Waits up to `timeout` for a pending asynchronous state change; returns the state then reached.
    public func waitForState(timeout: ClockTime) throws -> ElementState {
        var current = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
        let result = gst_element_get_state(element, &current, &pending, UInt(timeout.nanoseconds))
        if result == GST_STATE_CHANGE_FAILURE {
            throw GStreamerError.stateChangeFailed(element: name, target: ElementState(pending))
        }
        return ElementState(current)
    }

    // MARK: Linking and pads

    public func link(_ downstream: Element) throws {
        guard gst_element_link(element, downstream.element) != 0 else {
            throw GStreamerError.linkFailed(from: name, to: downstream.name)
        }
    }

    public func unlink(_ downstream: Element) { gst_element_unlink(element, downstream.element) }

    /// While locked, the element keeps its state when its parent changes state (it is being taken out of, or
    /// put into, a running bin). Returns whether the lock changed.
    @discardableResult
    public func setLockedState(_ locked: Bool) -> Bool { gst_element_set_locked_state(element, locked ? 1 : 0) != 0 }

    /// Brings the element to its parent's state (the pending one if the parent is changing state).
    public func syncStateWithParent() throws {
        guard gst_element_sync_state_with_parent(element) != 0 else {
            throw GStreamerError.stateChangeFailed(element: name, target: parent?.currentState ?? .null)
        }
    }

    /// How many of its sink pads (static and request) are linked to a peer now.
    public var linkedSinkPadCount: Int {
        iteratedObjects(gst_element_iterate_sink_pads(element)) { raw in
            gst_pad_is_linked(raw.assumingMemoryBound(to: GstPad.self)) != 0 ? true : nil
        }.count
    }

    public func staticPad(_ name: String) throws -> Pad {
        guard let pad = gst_element_get_static_pad(element, name) else {
            throw GStreamerError.noSuchPad(element: self.name, pad: name)
        }
        return Pad(takingOwnershipOf: pad)
    }

    // MARK: Clock and times (the coordination layer drives these)

    /// The clock the element currently uses, if any.
    public var clock: Clock? {
        guard let raw = gst_element_get_clock(element) else { return nil }
        return Clock(takingOwnershipOf: raw)
    }

    /// Makes the element use `clock` now (a bin passes it to its children). A pipeline does this itself on
    /// PAUSED→PLAYING; the coordinated start sets it on the sinks it starts ahead of their pipeline.
    @discardableResult
    public func setClock(_ clock: Clock) -> Bool { gst_element_set_clock(element, clock.clock) != 0 }

    /// Whether the element is a sink (`GST_ELEMENT_FLAG_SINK`; a bin holding a sink has it too).
    public var isSink: Bool {
        (element.pointee.object.flags & GST_ELEMENT_FLAG_SINK.rawValue) != 0
    }

    /// `gst_element_get_base_time` / `gst_element_set_base_time`.
    public var baseTime: ClockTime? {
        get { ClockTime(raw: gst_element_get_base_time(element)) }
        set { gst_element_set_base_time(element, newValue.rawClockTime) }
    }

    /// `nil` = `GST_CLOCK_TIME_NONE`: the pipeline no longer picks a new base time on PAUSED→PLAYING, so the
    /// caller's base time is kept (the basis of coordinated start).
    public var startTime: ClockTime? {
        get { ClockTime(raw: gst_element_get_start_time(element)) }
        set { gst_element_set_start_time(element, newValue.rawClockTime) }
    }

    // MARK: Queries and seeks

    public func queryPosition() -> ClockTime? {
        var position: gint64 = -1
        guard gst_element_query_position(element, GST_FORMAT_TIME, &position) != 0, position >= 0 else { return nil }
        return ClockTime(nanoseconds: UInt64(position))
    }

    public func queryDuration() -> ClockTime? {
        var duration: gint64 = -1
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &duration) != 0, duration >= 0 else { return nil }
        return ClockTime(nanoseconds: UInt64(duration))
    }

    /// Pipeline latency (live/min) from a latency query, nil when it cannot be answered.
    public func queryLatency() -> (live: Bool, minimum: ClockTime, maximum: ClockTime?)? {
        guard let query = gst_query_new_latency() else { return nil }
        defer { gst_query_unref(query) }
        guard gst_element_query(element, query) != 0 else { return nil }
        var live: gboolean = 0
        var minimum: GstClockTime = 0, maximum: GstClockTime = 0
        gst_query_parse_latency(query, &live, &minimum, &maximum)
        return (live != 0, ClockTime(raw: minimum) ?? .zero, ClockTime(raw: maximum))
    }

    public struct SeekFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let flush = SeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue)
        public static let accurate = SeekFlags(rawValue: GST_SEEK_FLAG_ACCURATE.rawValue)
        public static let keyUnit = SeekFlags(rawValue: GST_SEEK_FLAG_KEY_UNIT.rawValue)
        public static let instantRateChange = SeekFlags(rawValue: GST_SEEK_FLAG_INSTANT_RATE_CHANGE.rawValue)
        public static let trickMode = SeekFlags(rawValue: GST_SEEK_FLAG_TRICKMODE.rawValue)
    }

    /// A time seek. `position` nil keeps the current position (rate changes); `stop` nil plays to the end.
    public func seek(rate: Double = 1.0, flags: SeekFlags, position: ClockTime?, stop: ClockTime? = nil) throws {
        let ok = gst_element_seek(
            element, rate, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue),
            position == nil ? GST_SEEK_TYPE_NONE : GST_SEEK_TYPE_SET, Int(bitPattern: position.rawClockTime),
            stop == nil ? GST_SEEK_TYPE_NONE : GST_SEEK_TYPE_SET, Int(bitPattern: stop.rawClockTime))
        guard ok != 0 else { throw GStreamerError.seekFailed(element: name) }
    }

    /// Sends a time seek upstream from the element's first source pad, so that the elements feeding that pad (a
    /// source bin's demuxer) perform it whatever the pipeline's sinks are doing. False when the element has no
    /// source pad or nothing upstream took the seek.
    @discardableResult
    public func seekFromFirstSourcePad(rate: Double = 1.0, flags: SeekFlags, position: ClockTime) -> Bool {
        sourcePads.first?.sendSeek(rate: rate, flags: flags, position: position) ?? false
    }

    /// Posts an application message on the element's bus (used to wake bus consumers deterministically).
    public func postApplicationMessage(_ structureName: String) {
        guard let structure = gst_structure_new_empty(structureName),
              let message = gst_message_new_application(
                UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstObject.self), structure)
        else { return }
        gst_element_post_message(element, message)
    }

    /// Posts a buffering message from this element, as a queue filling or draining would (tests use it to
    /// replay buffering sequences exactly, e.g. a dip and its recovery posted back to back).
    public func postBufferingMessage(percent: Int) {
        guard let message = gst_message_new_buffering(
            UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstObject.self), Int32(percent))
        else { return }
        gst_element_post_message(element, message)
    }
}

/// An owned `GstBin`.
public class Bin: Element, @unchecked Sendable {
    public var bin: UnsafeMutablePointer<GstBin> {
        UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstBin.self)
    }

    /// Builds a bin from a gst-launch description; unlinked pads are ghosted (so a sink chain becomes one sink).
    public static func parse(_ description: String, ghostUnlinkedPads: Bool = true) throws -> Bin {
        guard GStreamer.ensureInitialized() else { throw GStreamerError.initializationFailed }
        var error: UnsafeMutablePointer<GError>?
        let raw = gst_parse_bin_from_description(description, ghostUnlinkedPads ? 1 : 0, &error)
        if let error {
            let message = GLibError(error).message
            g_error_free(error)
            if let raw { gst_object_unref(raw) }
            throw GStreamerError.parse(description: description, message: message)
        }
        guard let raw else { throw GStreamerError.parse(description: description, message: "no bin") }
        return Bin(takingOwnershipOf: raw)
    }

    public func add(_ child: Element) throws {
        guard gst_bin_add(bin, child.element) != 0 else {
            throw GStreamerError.linkFailed(from: child.name, to: name)
        }
    }

    /// Takes `child` out of this bin (its pads are unlinked); false when it was not a child.
    @discardableResult
    public func remove(_ child: Element) -> Bool { gst_bin_remove(bin, child.element) != 0 }

    /// The direct children (no recursion into sub-bins).
    public var children: [Element] { descendants { _ in true }.filter { $0.parent?.gobject == gobject } }

    /// Exposes `target` (a pad of a child) as a pad of the bin itself.
    public func addGhostPad(named name: String, target: Pad) throws {
        guard let ghost = gst_ghost_pad_new(name, target.pad) else {
            throw GStreamerError.noSuchPad(element: self.name, pad: name)
        }
        gst_pad_set_active(ghost, 1)
        guard gst_element_add_pad(element, ghost) != 0 else {
            throw GStreamerError.noSuchPad(element: self.name, pad: name)
        }
    }

    /// The sink elements inside this bin at any depth, bins themselves left out (the elements that wait on
    /// the clock to render).
    public func leafSinks() -> [Element] {
        descendants { $0.isSink && $0.asBin() == nil }
    }

    /// The elements inside this bin at any depth that satisfy `include`.
    public func descendants(where include: (Element) -> Bool) -> [Element] {
        iteratedObjects(gst_bin_iterate_recurse(bin)) { raw in
            let element = Element(borrowing: raw)
            return include(element) ? element : nil
        }
    }

    /// The names of the sinks (at any depth) whose state change is still pending: during a preroll, the sinks
    /// that have had no first buffer yet — what a preroll timeout names, so a stuck branch shows which it is.
    public func sinksStillPrerolling() -> [String] {
        descendants { $0.isSink && $0.asBin() == nil && $0.isStateChangePending }.map(\.name)
    }

    /// A child (recursing into sub-bins) by name.
    public func child(named name: String) -> Element? {
        guard let raw = gst_bin_get_by_name(bin, name) else { return nil }
        return Element(takingOwnershipOf: raw)
    }
}

/// An owned `GstPipeline`. Going out of scope sets it to NULL first, so no streaming thread outlives it.
public final class Pipeline: Bin, @unchecked Sendable {
    public var pipeline: UnsafeMutablePointer<GstPipeline> {
        UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstPipeline.self)
    }

    public convenience init(name: String? = nil) throws {
        guard GStreamer.ensureInitialized(), let raw = gst_pipeline_new(name) else {
            throw GStreamerError.initializationFailed
        }
        self.init(takingOwnershipOf: raw)
    }

    /// Makes a top-level element from a factory that produces a pipeline (e.g. "playbin3").
    public convenience init(factory: String, name: String? = nil) throws {
        guard GStreamer.ensureInitialized() else { throw GStreamerError.initializationFailed }
        guard let raw = gst_element_factory_make(factory, name) else {
            throw GStreamerError.missingElement(factory: factory)
        }
        guard g_type_check_instance_is_a(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_pipeline_get_type()) != 0 else {
            gst_object_unref(raw)
            throw GStreamerError.notAPipeline(factory)
        }
        self.init(takingOwnershipOf: raw)
    }

    /// Builds a pipeline from a gst-launch description.
    public static func parseLaunch(_ description: String) throws -> Pipeline {
        guard GStreamer.ensureInitialized() else { throw GStreamerError.initializationFailed }
        var error: UnsafeMutablePointer<GError>?
        let raw = gst_parse_launch(description, &error)
        if let error {
            let message = GLibError(error).message
            g_error_free(error)
            if let raw { gst_object_unref(raw) }
            throw GStreamerError.parse(description: description, message: message)
        }
        guard let raw else { throw GStreamerError.parse(description: description, message: "nothing built") }
        guard g_type_check_instance_is_a(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_pipeline_get_type()) != 0 else {
            gst_object_unref(raw)
            throw GStreamerError.notAPipeline(description)
        }
        return Pipeline(takingOwnershipOf: raw)
    }

    deinit {
        gst_element_set_state(element, GST_STATE_NULL)
    }

    /// The pipeline's bus (one consumer: see `Bus.messages()`).
    public func bus() -> Bus {
        Bus(takingOwnershipOf: gst_pipeline_get_bus(pipeline), pipeline: self)
    }

    /// Forces the pipeline to use `clock` (instead of electing one from its elements).
    public func useClock(_ clock: Clock) {
        gst_pipeline_use_clock(pipeline, clock.clock)
    }

    /// Goes back to automatic clock selection.
    public func autoClock() { gst_pipeline_auto_clock(pipeline) }

    /// The clock the pipeline runs on (selected when it goes to PLAYING, or the one forced with `useClock`).
    public var pipelineClock: Clock? {
        guard let raw = gst_pipeline_get_pipeline_clock(pipeline) else { return nil }
        return Clock(takingOwnershipOf: raw)
    }

    /// Extra latency added to the pipeline's computed latency.
    public var latency: ClockTime? {
        get { ClockTime(raw: gst_pipeline_get_latency(pipeline)) }
        set { gst_pipeline_set_latency(pipeline, newValue.rawClockTime) }
    }
}
