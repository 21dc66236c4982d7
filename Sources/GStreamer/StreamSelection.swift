import CGStreamer

extension Element {
    /// Sends a SELECT_STREAMS event (playbin3 / decodebin3): exactly these stream ids are played, every other
    /// stream of the collection is deselected. Returns whether the element accepted the event.
    @discardableResult
    public func selectStreams(_ streamIDs: [String]) -> Bool {
        var list: UnsafeMutablePointer<GList>?
        for id in streamIDs { list = g_list_append(list, g_strdup(id)) }
        // The event copies the ids (transfer none), so the list and its strings are ours to free.
        defer { g_list_free_full(list, g_free) }
        guard let event = gst_event_new_select_streams(list) else { return false }
        return gst_element_send_event(element, event) != 0
    }
}
