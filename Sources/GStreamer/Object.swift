import CGStreamer

/// Owns one strong reference to a GObject and releases it in `deinit`.
///
/// Sendable: the only stored state is an immutable pointer. GObject reference counting is atomic, and the
/// GStreamer calls made through subclasses (state changes, property access under the object lock, queries,
/// seeks, events) are documented MT-safe, so sharing the owner across threads cannot race.
public class ObjectRef: @unchecked Sendable {
    public let gobject: UnsafeMutablePointer<GObject>

    /// Takes over a reference the caller owns ("transfer full"). Floating references are sunk first, so a
    /// freshly made element is owned by us, not by whichever bin adopts it.
    init(takingOwnershipOf pointer: UnsafeMutableRawPointer) {
        GStreamer.ensureInitialized()
        let object = pointer.assumingMemoryBound(to: GObject.self)
        if g_object_is_floating(object) != 0 { g_object_ref_sink(object) }
        self.gobject = object
    }

    /// Borrows a reference ("transfer none") and takes a reference of our own.
    init(borrowing pointer: UnsafeMutableRawPointer) {
        GStreamer.ensureInitialized()
        let object = pointer.assumingMemoryBound(to: GObject.self)
        // A plain ref: a borrowed floating object still belongs to whoever will sink it.
        g_object_ref(object)
        self.gobject = object
    }

    deinit { g_object_unref(gobject) }

    /// The GType name, e.g. "GstPlayBin3".
    public var typeName: String {
        String(cString: g_type_name(gobject.pointee.g_type_instance.g_class.pointee.g_type))
    }

    /// A weak reference to the underlying GObject, to prove in tests that nothing keeps it alive.
    public func weakReference() -> WeakObjectReference { WeakObjectReference(gobject) }

    /// The current reference count (diagnostics and leak tests only; racy by nature).
    public var referenceCount: UInt32 { UInt32(gobject.pointee.ref_count) }
}

/// The name of a `GstObject` (`gst_object_get_name`, copied and freed), nil when it has none.
func gstObjectName(_ object: UnsafeMutableRawPointer) -> String? {
    guard let raw = gst_object_get_name(object.assumingMemoryBound(to: GstObject.self)) else { return nil }
    defer { g_free(raw) }
    return String(cString: raw)
}

/// The name of the factory that made an element ("x264enc"), nil when there is none.
func gstFactoryName(ofElement element: UnsafeMutableRawPointer) -> String? {
    guard let factory = gst_element_get_factory(element.assumingMemoryBound(to: GstElement.self)) else { return nil }
    return gstObjectName(UnsafeMutableRawPointer(factory))
}

/// A `GWeakRef`: tells whether a GObject still exists without keeping it alive.
///
/// Sendable: `GWeakRef` is designed to be used from any thread (`g_weak_ref_get` is thread-safe); the storage
/// pointer is immutable and freed only in `deinit`.
public final class WeakObjectReference: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<GWeakRef>

    init(_ object: UnsafeMutablePointer<GObject>) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: GWeakRef())
        g_weak_ref_init(storage, object)
    }

    deinit {
        g_weak_ref_clear(storage)
        storage.deallocate()
    }

    /// True while the object exists.
    public var isAlive: Bool {
        guard let strong = g_weak_ref_get(storage) else { return false }
        g_object_unref(strong)
        return true
    }

    /// A strong reference if the object still exists (caller unrefs).
    func strongPointer() -> UnsafeMutablePointer<GObject>? {
        g_weak_ref_get(storage)?.assumingMemoryBound(to: GObject.self)
    }
}

/// `GstState`, as a Swift enum.
public enum ElementState: Int, Sendable, CustomStringConvertible, Comparable {
    case voidPending = 0, null = 1, ready = 2, paused = 3, playing = 4

    init(_ raw: GstState) { self = ElementState(rawValue: Int(raw.rawValue)) ?? .voidPending }
    var raw: GstState { GstState(rawValue: UInt32(rawValue)) }

    public var description: String {
        switch self {
        case .voidPending: return "VOID_PENDING"
        case .null: return "NULL"
        case .ready: return "READY"
        case .paused: return "PAUSED"
        case .playing: return "PLAYING"
        }
    }
    public static func < (a: ElementState, b: ElementState) -> Bool { a.rawValue < b.rawValue }
}

/// The successful outcomes of `gst_element_set_state` (failure throws): they differ in what happens next.
public enum StateChangeResult: Sendable, Equatable {
    /// Done synchronously.
    case success
    /// Completes later; an `asyncDone` message follows.
    case async
    /// Live source: PAUSED does not preroll.
    case noPreroll
}
