// The one C shim of Multiview. Everything Swift can call directly (including via GValue), it calls directly;
// only what Swift cannot express lives here. Every function says why it exists.
#pragma once
#include <gst/gst.h>

/// Creates a GClosure that carries `data` and is marshalled by `marshal`, and calls `finalize` with `data`
/// when GLib destroys the closure (on disconnect or when the instance dies).
/// Why: `g_closure_new_simple` needs `sizeof(GClosure)`, and GClosure is a bitfield struct whose size Swift's
/// importer does not guarantee to match C's; the generic marshaller lets one Swift trampoline serve every
/// signal signature (arguments arrive as a GValue array), instead of one @convention(c) function per signature.
GClosure *mv_closure_new(gpointer data, GClosureMarshal marshal, GClosureNotify finalize);

/// Returns the `data` pointer of a closure created by `mv_closure_new`.
/// Why: the `data` member sits after GClosure's bitfields, so its offset is only reliable from C.
gpointer mv_closure_get_data(GClosure *closure);

/// `GST_OBJECT_REFCOUNT_VALUE`: the reference count of a GObject, read atomically.
/// Why: a macro; tests use it to prove pipelines are not leaked.
guint mv_object_refcount(gpointer object);
