#include "CGStreamerShim.h"

GClosure *mv_closure_new(gpointer data, GClosureMarshal marshal, GClosureNotify finalize) {
    GClosure *closure = g_closure_new_simple(sizeof(GClosure), data);
    g_closure_set_marshal(closure, marshal);
    g_closure_add_finalize_notifier(closure, data, finalize);
    return closure;
}

gpointer mv_closure_get_data(GClosure *closure) {
    return closure->data;
}

guint mv_object_refcount(gpointer object) {
    return (guint)g_atomic_int_get(&((GObject *)object)->ref_count);
}
