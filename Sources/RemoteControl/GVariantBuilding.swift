import CGIO

/// Builds GVariants from `DBusValue`s without the variadic `g_variant_new` (Swift cannot call it): each scalar
/// has its own constructor, arrays and dictionaries go through a `GVariantBuilder`. Results are floating
/// references, which GDBus sinks (property replies, signal parameters).
enum GVariantBuilding {
    static func make(_ value: DBusValue) -> OpaquePointer {
        switch value {
        case .string(let s): return g_variant_new_string(s)
        case .bool(let b): return g_variant_new_boolean(b ? 1 : 0)
        case .double(let d): return g_variant_new_double(d)
        case .int64(let i): return g_variant_new_int64(gint64(i))
        case .objectPath(let p): return g_variant_new_object_path(p)
        case .strings(let items):
            return withBuilder("as") { builder in
                for item in items { g_variant_builder_add_value(builder, g_variant_new_string(item)) }
            }
        case .dictionary(let entries):
            return dictionary(entries)
        }
    }

    /// `a{sv}`, keys sorted (stable output).
    static func dictionary(_ entries: [String: DBusValue]) -> OpaquePointer {
        withBuilder("a{sv}") { builder in
            for key in entries.keys.sorted() {
                let entry = g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_variant(make(entries[key]!)))
                g_variant_builder_add_value(builder, entry)
            }
        }
    }

    /// `(v)`-free tuple of the given children (consumed when floating).
    static func tuple(_ children: [OpaquePointer]) -> OpaquePointer {
        var items: [OpaquePointer?] = children
        return items.withUnsafeMutableBufferPointer { g_variant_new_tuple($0.baseAddress, gsize(UInt($0.count))) }
    }

    private static func withBuilder(_ typeString: String, _ fill: (UnsafeMutablePointer<GVariantBuilder>) -> Void) -> OpaquePointer {
        let type = g_variant_type_new(typeString)
        defer { g_variant_type_free(type) }
        let builder = g_variant_builder_new(type)!
        defer { g_variant_builder_unref(builder) }
        fill(builder)
        return g_variant_builder_end(builder)
    }

    /// Reads child `index` of a tuple as int64 / string (method parameters).
    static func int64(_ tuple: OpaquePointer, _ index: Int) -> Int64? {
        guard let child = g_variant_get_child_value(tuple, gsize(UInt(index))) else { return nil }
        defer { g_variant_unref(child) }
        guard g_variant_is_of_type(child, g_variant_type_checked_("x")) != 0 else { return nil }
        return Int64(g_variant_get_int64(child))
    }

    static func string(_ tuple: OpaquePointer, _ index: Int) -> String? {
        guard let child = g_variant_get_child_value(tuple, gsize(UInt(index))) else { return nil }
        defer { g_variant_unref(child) }
        guard let text = g_variant_get_string(child, nil) else { return nil }
        return String(cString: text)
    }

    static func double(_ value: OpaquePointer) -> Double? {
        guard g_variant_is_of_type(value, g_variant_type_checked_("d")) != 0 else { return nil }
        return g_variant_get_double(value)
    }
}
