import CGStreamer

/// A Swift type that can be stored in / read from a GObject property, with a type check first:
/// asking for the wrong type throws instead of silently returning 0 or NULL.
public protocol PropertyValue {
    /// For error messages ("Bool", "Int", …).
    static var typeDescription: String { get }
    /// Whether a property of this GType can hold the Swift value.
    static func accepts(_ type: GType) -> Bool
    /// Writes self into `value`, already initialised to the property's type; false when out of range.
    func store(in value: UnsafeMutablePointer<GValue>) -> Bool
    static func load(from value: UnsafePointer<GValue>) -> Self?
}

extension Bool: PropertyValue {
    public static var typeDescription: String { "Bool" }
    public static func accepts(_ type: GType) -> Bool { g_type_fundamental(type) == .gBoolean }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool { g_value_set_boolean(value, self ? 1 : 0); return true }
    public static func load(from value: UnsafePointer<GValue>) -> Bool? { g_value_get_boolean(value) != 0 }
}

extension Int: PropertyValue {
    public static var typeDescription: String { "Int" }
    public static func accepts(_ type: GType) -> Bool {
        [.gInt, .gUInt, .gLong, .gULong, .gInt64, .gUInt64].contains(g_type_fundamental(type))
    }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool {
        switch g_type_fundamental(value.pointee.g_type) {
        case .gInt: guard let v = Int32(exactly: self) else { return false }; g_value_set_int(value, v)
        case .gUInt: guard let v = UInt32(exactly: self) else { return false }; g_value_set_uint(value, v)
        case .gLong: g_value_set_long(value, self)
        case .gULong: guard let v = UInt(exactly: self) else { return false }; g_value_set_ulong(value, v)
        case .gInt64: g_value_set_int64(value, self)
        case .gUInt64: guard let v = UInt(exactly: self) else { return false }; g_value_set_uint64(value, v)
        default: return false
        }
        return true
    }
    public static func load(from value: UnsafePointer<GValue>) -> Int? {
        switch g_type_fundamental(value.pointee.g_type) {
        case .gInt: return Int(g_value_get_int(value))
        case .gUInt: return Int(g_value_get_uint(value))
        case .gLong: return g_value_get_long(value)
        case .gULong: return Int(exactly: g_value_get_ulong(value))
        case .gInt64: return Int(g_value_get_int64(value))
        case .gUInt64: return Int(exactly: g_value_get_uint64(value))
        default: return nil
        }
    }
}

extension Double: PropertyValue {
    public static var typeDescription: String { "Double" }
    public static func accepts(_ type: GType) -> Bool { [.gDouble, .gFloat].contains(g_type_fundamental(type)) }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool {
        if g_type_fundamental(value.pointee.g_type) == .gFloat { g_value_set_float(value, Float(self)) }
        else { g_value_set_double(value, self) }
        return true
    }
    public static func load(from value: UnsafePointer<GValue>) -> Double? {
        g_type_fundamental(value.pointee.g_type) == .gFloat ? Double(g_value_get_float(value)) : g_value_get_double(value)
    }
}

extension String: PropertyValue {
    public static var typeDescription: String { "String" }
    public static func accepts(_ type: GType) -> Bool { g_type_fundamental(type) == .gString }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool { g_value_set_string(value, self); return true }
    public static func load(from value: UnsafePointer<GValue>) -> String? {
        g_value_get_string(value).map { String(cString: $0) }
    }
}

extension Element: PropertyValue {
    public static var typeDescription: String { "Element" }
    public static func accepts(_ type: GType) -> Bool { g_type_is_a(type, gst_element_get_type()) != 0 || type == gst_element_get_type() }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool { g_value_set_object(value, gobject); return true }
    public static func load(from value: UnsafePointer<GValue>) -> Self? {
        guard let raw = g_value_get_object(value) else { return nil }
        return Self.borrowing(raw.assumingMemoryBound(to: GstElement.self)) as? Self
    }
}

extension Caps: PropertyValue {
    public static var typeDescription: String { "Caps" }
    public static func accepts(_ type: GType) -> Bool { type == gst_caps_get_type() }
    public func store(in value: UnsafeMutablePointer<GValue>) -> Bool { g_value_set_boxed(value, caps); return true }
    public static func load(from value: UnsafePointer<GValue>) -> Caps? {
        guard let raw = g_value_dup_boxed(value) else { return nil }
        return Caps(takingOwnershipOf: raw.assumingMemoryBound(to: GstCaps.self))
    }
}

extension ObjectRef {
    private var objectName: String {
        if g_type_check_instance_is_a(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GTypeInstance.self),
                                      gst_object_get_type()) != 0,
           let name = gstObjectName(gobject) {
            return name
        }
        return typeName
    }

    private func paramSpec(_ name: String) throws -> UnsafeMutablePointer<GParamSpec> {
        let klass = UnsafeMutableRawPointer(gobject.pointee.g_type_instance.g_class).assumingMemoryBound(to: GObjectClass.self)
        guard let spec = g_object_class_find_property(klass, name) else {
            throw GStreamerError.noSuchProperty(element: objectName, property: name)
        }
        return spec
    }

    /// The spec of a property that can be written; throws when it does not exist or is read-only.
    private func writableParamSpec(_ name: String) throws -> UnsafeMutablePointer<GParamSpec> {
        let spec = try paramSpec(name)
        guard spec.pointee.flags.rawValue & G_PARAM_WRITABLE.rawValue != 0 else {
            throw GStreamerError.propertyNotWritable(element: objectName, property: name)
        }
        return spec
    }

    /// Throws unless property `name` (described by `spec`) holds values of the Swift type `V`.
    private func requireValues<V: PropertyValue>(of _: V.Type, in spec: UnsafeMutablePointer<GParamSpec>,
                                                 _ name: String) throws {
        let type = spec.pointee.value_type
        guard V.accepts(type) else {
            throw GStreamerError.propertyTypeMismatch(element: objectName, property: name,
                                                      expected: V.typeDescription, actual: String(cString: g_type_name(type)))
        }
    }

    public func hasProperty(_ name: String) -> Bool { (try? paramSpec(name)) != nil }

    /// The property's GType name ("gboolean", "GstCaps", "GstPlayFlags", …).
    public func propertyTypeName(_ name: String) throws -> String {
        String(cString: g_type_name(try paramSpec(name).pointee.value_type))
    }

    /// Sets a property; throws when it does not exist, is read-only, or holds another type.
    public func set<V: PropertyValue>(_ name: String, _ newValue: V) throws {
        let spec = try writableParamSpec(name)
        try requireValues(of: V.self, in: spec, name)
        let type = spec.pointee.value_type
        var value = GValue()
        g_value_init(&value, type)
        defer { g_value_unset(&value) }
        // store() rejects values the C type cannot hold; g_param_value_validate rejects values outside the
        // property's declared range (GLib would otherwise only log a warning and keep the old value).
        guard newValue.store(in: &value), g_param_value_validate(spec, &value) == 0 else {
            throw GStreamerError.invalidPropertyValue(element: objectName, property: name, value: "\(newValue)")
        }
        g_object_set_property(gobject, name, &value)
    }

    /// Reads a property; throws when it does not exist or holds another type.
    public func get<V: PropertyValue>(_ name: String, as type: V.Type = V.self) throws -> V {
        let spec = try paramSpec(name)
        try requireValues(of: V.self, in: spec, name)
        let gtype = spec.pointee.value_type
        var value = GValue()
        g_value_init(&value, gtype)
        defer { g_value_unset(&value) }
        g_object_get_property(gobject, name, &value)
        guard let result = V.load(from: &value) else {
            throw GStreamerError.propertyTypeMismatch(element: objectName, property: name,
                                                      expected: V.typeDescription, actual: "NULL")
        }
        return result
    }

    /// Sets a property from its textual form — how enums ("flags" = "video+audio"; read back with full value
    /// names by `string(ofProperty:)`), fractions and structures
    /// are set. Throws for a missing property or a text GStreamer cannot parse for that type.
    public func set(_ name: String, fromString text: String) throws {
        let spec = try writableParamSpec(name)
        var value = GValue()
        g_value_init(&value, spec.pointee.value_type)
        defer { g_value_unset(&value) }
        guard gst_value_deserialize(&value, text) != 0, g_param_value_validate(spec, &value) == 0 else {
            throw GStreamerError.invalidPropertyValue(element: objectName, property: name, value: text)
        }
        g_object_set_property(gobject, name, &value)
    }

    /// The textual form of any property (enums by nick, flags joined with "+").
    public func string(ofProperty name: String) throws -> String {
        let spec = try paramSpec(name)
        var value = GValue()
        g_value_init(&value, spec.pointee.value_type)
        defer { g_value_unset(&value) }
        g_object_get_property(gobject, name, &value)
        if g_type_fundamental(spec.pointee.value_type) == .gString {
            return g_value_get_string(&value).map { String(cString: $0) } ?? ""
        }
        guard let text = gst_value_serialize(&value) else { return "" }
        defer { g_free(text) }
        return String(cString: text)
    }
}
