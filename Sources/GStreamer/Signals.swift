import CGStreamer
import CGStreamerShim

/// The arguments of a signal emission, valid only during the handler call.
/// Index 0 is the emitting instance; the signal's own parameters follow.
public struct SignalArguments {
    let values: UnsafePointer<GValue>
    public let count: Int
    let returnValue: UnsafeMutablePointer<GValue>?

    /// Argument `index` as an element (for signals such as "deep-element-added" or "pad-added" on elements).
    public func element(at index: Int) -> Element? {
        guard index < count, let raw = g_value_get_object(values + index) else { return nil }
        guard g_type_check_instance_is_a(raw.assumingMemoryBound(to: GTypeInstance.self), gst_element_get_type()) != 0
        else { return nil }
        return Element(borrowing: raw)
    }

    public func pad(at index: Int) -> Pad? {
        guard index < count, let raw = g_value_get_object(values + index) else { return nil }
        guard g_type_check_instance_is_a(raw.assumingMemoryBound(to: GTypeInstance.self), gst_pad_get_type()) != 0
        else { return nil }
        return Pad(borrowing: raw)
    }

    /// The PTS of a `GstBuffer` argument (e.g. fakesink's "handoff"), nil when absent or not a buffer.
    public func bufferTimestamp(at index: Int) -> ClockTime? {
        guard index < count, (values + index).pointee.g_type == gst_buffer_get_type(),
              let raw = g_value_get_boxed(values + index) else { return nil }
        return ClockTime(raw: raw.assumingMemoryBound(to: GstBuffer.self).pointee.pts)
    }

    public func int(at index: Int) -> Int? {
        guard index < count else { return nil }
        return Int.load(from: values + index)
    }

    public func string(at index: Int) -> String? {
        guard index < count else { return nil }
        return String.load(from: values + index)
    }

    /// Sets the handler's return value for signals that return one (e.g. appsink's "new-sample" flow return).
    public func setReturn(int value: Int) {
        guard let returnValue, returnValue.pointee.g_type != 0 else { return }
        // Flow returns and other enums are not integers to GValue: they need g_value_set_enum.
        if g_type_fundamental(returnValue.pointee.g_type) == .gEnum {
            g_value_set_enum(returnValue, gint(truncatingIfNeeded: value))
        } else {
            _ = value.store(in: returnValue)
        }
    }
}

/// A connected signal handler. Releasing the token disconnects it (if the object still exists); the Swift
/// closure is released by GLib when the closure is finalised.
///
/// Sendable: the handler id and weak-ref storage are immutable after init; `g_signal_handler_disconnect` and
/// `GWeakRef` are thread-safe.
public final class SignalConnection: @unchecked Sendable {
    private let target: WeakObjectReference
    private let handlerID: gulong

    init(target: WeakObjectReference, handlerID: gulong) {
        self.target = target
        self.handlerID = handlerID
    }

    deinit {
        guard let object = target.strongPointer() else { return }
        if g_signal_handler_is_connected(object, handlerID) != 0 {
            g_signal_handler_disconnect(object, handlerID)
        }
        g_object_unref(object)
    }

    /// Whether the handler is still connected (false after the object died).
    public var isConnected: Bool {
        guard let object = target.strongPointer() else { return false }
        defer { g_object_unref(object) }
        return g_signal_handler_is_connected(object, handlerID) != 0
    }
}

extension ObjectRef {
    /// Connects a Swift closure to a signal. Keep the returned token: dropping it disconnects.
    /// The closure runs on whichever thread emits the signal (often a streaming thread) and must not capture
    /// the emitting object strongly (that would be a cycle): use the arguments instead.
    public func connect(_ signal: String, after: Bool = false,
                        _ body: @escaping @Sendable (SignalArguments) -> Void) throws -> SignalConnection {
        var signalID: guint = 0
        var detail: GQuark = 0
        guard g_signal_parse_name(signal, gobject.pointee.g_type_instance.g_class.pointee.g_type, &signalID, &detail, 1) != 0
        else {
            throw GStreamerError.noSuchSignal(element: typeName, signal: signal)
        }
        let box = Unmanaged.passRetained(SignalHandlerBox(body)).toOpaque()
        let closure = mv_closure_new(box, SignalHandlerBox.marshal, SignalHandlerBox.finalize)
        let id = g_signal_connect_closure(gobject, signal, closure, after ? 1 : 0)
        return SignalConnection(target: weakReference(), handlerID: id)
    }
}

/// Holds a signal closure's Swift body for GLib (retained once, released by the closure's finalize notifier).
final class SignalHandlerBox {
    let body: @Sendable (SignalArguments) -> Void
    init(_ body: @escaping @Sendable (SignalArguments) -> Void) { self.body = body }

    /// One generic marshaller for every signal signature: GLib hands us the arguments as GValues.
    static let marshal: GClosureMarshal = { closure, returnValue, count, values, _, _ in
        guard let closure, let values, let data = mv_closure_get_data(closure) else { return }
        let box = Unmanaged<SignalHandlerBox>.fromOpaque(data).takeUnretainedValue()
        box.body(SignalArguments(values: values, count: Int(count), returnValue: returnValue))
    }

    static let finalize: GClosureNotify = { data, _ in
        guard let data else { return }
        Unmanaged<SignalHandlerBox>.fromOpaque(data).release()
    }
}
