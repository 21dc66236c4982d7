import CGIO
import Foundation

/// A thread of its own running a private GLib main context. GDBus delivers every callback (method calls,
/// property reads, name acquired/lost) on the main context that was the thread's default when the object was
/// registered or the name owned — so everything D-Bus in `MPRISServer` is done inside `invoke`, and this thread
/// is the one serial owner of the connection, the registrations and the name ownership.
///
/// Threading: `context` and `loop` are immutable pointers; `g_main_context_invoke_full` and
/// `g_main_loop_quit` are documented thread-safe, which is all other threads call.
final class GLibLoopThread: @unchecked Sendable {
    // @unchecked: two immutable GLib pointers, used from other threads only through thread-safe GLib calls.
    let context: OpaquePointer
    private let loop: OpaquePointer
    private let thread: Thread

    init(name: String) {
        let context = g_main_context_new()!
        let loop = g_main_loop_new(context, 0)!
        self.context = context
        self.loop = loop
        // The thread holds its own references: it may still be leaving the loop when this object is released.
        g_main_context_ref(context)
        g_main_loop_ref(loop)
        let pointers = LoopPointers(context: context, loop: loop)
        thread = Thread {
            let context = pointers.context, loop = pointers.loop
            g_main_context_push_thread_default(context)
            g_main_loop_run(loop)
            // Run what was queued before the quit (e.g. the last unregistration) before leaving.
            while g_main_context_iteration(context, 0) != 0 {}
            g_main_context_pop_thread_default(context)
            g_main_loop_unref(loop)
            g_main_context_unref(context)
        }
        thread.name = name
        thread.start()
    }

    deinit {
        g_main_loop_quit(loop)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Runs `body` on the loop thread, in order with every other invocation and GDBus callback.
    func invoke(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(InvocationBox(body)).toOpaque()
        g_main_context_invoke_full(context, 0 /* G_PRIORITY_DEFAULT */, GLibLoopTrampolines.run, box,
                                   GLibLoopTrampolines.release)
    }

    /// Runs `body` on the loop thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            invoke {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Leaves the loop once what is queued so far has run.
    func quit() {
        g_main_loop_ref(loop)
        let pointers = LoopPointers(context: context, loop: loop)
        invoke {
            g_main_loop_quit(pointers.loop)
            g_main_loop_unref(pointers.loop)
        }
    }
}

/// The loop's two pointers, handed to its thread and to the quit invocation.
private struct LoopPointers: @unchecked Sendable {
    // @unchecked: each holder owns a reference (taken before handing over), and the GLib calls made with them
    // from the loop thread (run, iterate, quit, unref) are thread-safe.
    let context: OpaquePointer
    let loop: OpaquePointer
}

private final class InvocationBox {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// C trampolines for `g_main_context_invoke_full` (they cannot capture; the closure travels as user data).
enum GLibLoopTrampolines {
    static let run: GSourceFunc = { data in
        guard let data else { return 0 }
        Unmanaged<InvocationBox>.fromOpaque(data).takeUnretainedValue().body()
        return 0 // G_SOURCE_REMOVE
    }
    static let release: GDestroyNotify = { data in
        guard let data else { return }
        Unmanaged<InvocationBox>.fromOpaque(data).release()
    }
}
