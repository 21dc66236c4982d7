import CGStreamer

extension Element {
    /// Tells a video-overlay sink (ximagesink, xvimagesink, glimagesink) to draw into an existing native
    /// window (an X11 window id) instead of opening its own. Throws when the element is not an overlay sink.
    public func setWindowHandle(_ handle: UInt) throws {
        guard g_type_check_instance_is_a(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_video_overlay_get_type()) != 0 else {
            throw GStreamerError.propertyTypeMismatch(element: name, property: "window-handle",
                                                      expected: "GstVideoOverlay", actual: typeName)
        }
        gst_video_overlay_set_window_handle(OpaquePointer(gobject), guintptr(handle))
    }

    /// Asks an overlay sink to redraw its last frame (after the window was exposed).
    public func exposeOverlay() {
        guard g_type_check_instance_is_a(UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GTypeInstance.self),
                                         gst_video_overlay_get_type()) != 0 else { return }
        gst_video_overlay_expose(OpaquePointer(gobject))
    }
}
