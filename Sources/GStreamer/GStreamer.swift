import CGStreamer

/// Process-wide GStreamer initialisation. Every wrapper entry point calls `GStreamer.ensureInitialized()`;
/// Swift's lazy `static let` makes it run exactly once, thread-safely.
public enum GStreamer {
    private static let initialized: Bool = {
        var error: UnsafeMutablePointer<GError>?
        let ok = gst_init_check(nil, nil, &error)
        if let error { g_error_free(error) }
        return ok != 0
    }()

    /// Initialises GStreamer once. Returns false when the library could not start (no plugins registry, …).
    @discardableResult
    public static func ensureInitialized() -> Bool { initialized }

    /// "1.22.0" — the runtime library version.
    public static var version: String {
        ensureInitialized()
        guard let raw = gst_version_string() else { return "unknown" }
        defer { g_free(raw) }
        return String(cString: raw).replacingOccurrences(of: "GStreamer ", with: "")
    }

    /// True when an element factory of that name is registered (plugin installed).
    public static func hasElement(_ factory: String) -> Bool {
        ensureInitialized()
        guard let f = gst_element_factory_find(factory) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(f))
        return true
    }

    /// True when an installed source element reads URIs of that scheme ("file", "http", …; "foo" is not).
    public static func canRead(scheme: String) -> Bool {
        ensureInitialized()
        return gst_uri_protocol_is_supported(GST_URI_SRC, scheme) != 0
    }
}
