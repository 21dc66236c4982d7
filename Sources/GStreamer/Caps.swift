import CGStreamer

/// Owned `GstCaps` (a mini object: ref/unref, no GObject).
///
/// Sendable: the pointer is immutable; we never modify caps after creation (caps are only writable when
/// their refcount is 1, and we treat them as read-only values).
public final class Caps: @unchecked Sendable, CustomStringConvertible {
    public let caps: UnsafeMutablePointer<GstCaps>

    init(takingOwnershipOf raw: UnsafeMutablePointer<GstCaps>) { caps = raw }

    /// Parses "video/x-raw,width=640"; throws on bad syntax.
    public convenience init(_ description: String) throws {
        GStreamer.ensureInitialized()
        guard let raw = gst_caps_from_string(description) else { throw GStreamerError.invalidCaps(description) }
        self.init(takingOwnershipOf: raw)
    }

    deinit { gst_caps_unref(caps) }

    public var description: String {
        guard let raw = gst_caps_to_string(caps) else { return "" }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    public var count: Int { Int(gst_caps_get_size(caps)) }
    /// No format at all (EMPTY), as opposed to ANY.
    public var isEmpty: Bool { gst_caps_is_empty(caps) != 0 }

    /// A copy of structure `index` (nil when out of range).
    public func structure(at index: Int = 0) -> Structure? {
        guard index < count, let raw = gst_caps_get_structure(caps, guint(index)) else { return nil }
        return Structure(raw)
    }
}

/// A `GstStructure` copied into Swift: its name and its fields as typed values.
public struct Structure: Sendable, Equatable, CustomStringConvertible {
    public enum Value: Sendable, Equatable {
        case bool(Bool), int(Int), uint(UInt64), double(Double), string(String)
        case fraction(Int, Int)
        /// Any other type, in GStreamer's serialised form.
        case other(String)
    }

    public var name: String
    public var fields: [String: Value]
    /// `gst_structure_to_string` form, for logs.
    public var serialized: String

    public init(name: String, fields: [String: Value] = [:]) {
        self.name = name; self.fields = fields; self.serialized = name
    }

    init(_ raw: UnsafePointer<GstStructure>) {
        name = String(cString: gst_structure_get_name(raw))
        var fields: [String: Value] = [:]
        for i in 0..<gst_structure_n_fields(raw) {
            guard let fieldName = gst_structure_nth_field_name(raw, guint(i)),
                  let value = gst_structure_get_value(raw, fieldName) else { continue }
            fields[String(cString: fieldName)] = Structure.convert(value)
        }
        self.fields = fields
        if let text = gst_structure_to_string(raw) {
            serialized = String(cString: text)
            g_free(text)
        } else {
            serialized = name
        }
    }

    static func convert(_ value: UnsafePointer<GValue>) -> Value {
        let type = value.pointee.g_type
        switch g_type_fundamental(type) {
        case GType.gBoolean: return .bool(g_value_get_boolean(value) != 0)
        case GType.gInt: return .int(Int(g_value_get_int(value)))
        case GType.gUInt: return .uint(UInt64(g_value_get_uint(value)))
        case GType.gInt64: return .int(Int(g_value_get_int64(value)))
        case GType.gUInt64: return .uint(UInt64(g_value_get_uint64(value)))
        case GType.gDouble: return .double(g_value_get_double(value))
        case GType.gFloat: return .double(Double(g_value_get_float(value)))
        case GType.gString: return .string(g_value_get_string(value).map { String(cString: $0) } ?? "")
        default:
            if type == gst_fraction_get_type() {
                return .fraction(Int(gst_value_get_fraction_numerator(value)),
                                 Int(gst_value_get_fraction_denominator(value)))
            }
            guard let text = gst_value_serialize(value) else { return .other("") }
            defer { g_free(text) }
            return .other(String(cString: text))
        }
    }

    public var description: String { serialized }

    public func int(_ field: String) -> Int? {
        switch fields[field] {
        case .int(let v): return v
        case .uint(let v): return Int(v)
        default: return nil
        }
    }
    public func string(_ field: String) -> String? {
        if case .string(let v) = fields[field] { return v }
        return nil
    }
    public func double(_ field: String) -> Double? {
        switch fields[field] {
        case .double(let v): return v
        case .int(let v): return Double(v)
        case .fraction(let n, let d): return d == 0 ? nil : Double(n) / Double(d)
        default: return nil
        }
    }
}

/// Fundamental GTypes. `G_TYPE_MAKE_FUNDAMENTAL(n)` is `n << 2`, fixed by GLib's ABI; the C macros are
/// casts Swift cannot import.
extension GType {
    static let gBoolean: GType = 5 << 2
    static let gInt: GType = 6 << 2
    static let gUInt: GType = 7 << 2
    static let gLong: GType = 8 << 2
    static let gULong: GType = 9 << 2
    static let gInt64: GType = 10 << 2
    static let gUInt64: GType = 11 << 2
    static let gEnum: GType = 12 << 2
    static let gFlags: GType = 13 << 2
    static let gFloat: GType = 14 << 2
    static let gDouble: GType = 15 << 2
    static let gString: GType = 16 << 2
    static let gPointer: GType = 17 << 2
    static let gBoxed: GType = 18 << 2
    static let gObject: GType = 20 << 2
}
