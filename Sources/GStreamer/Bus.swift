import CGStreamer
import Glibc
import Synchronization

/// Real-time scheduling for chosen streaming threads. A sink waits on the clock and then renders; on a busy
/// machine (2 cores, several decoders) the kernel wakes it late, and that lateness is exactly the skew between
/// views. Raising only the threads that *wait and render* (playsink's `vqueue` feeds the video sink on its own
/// thread) to SCHED_FIFO lets them pre-empt decoding, which is bounded and runs on other threads.
///
/// It is applied on the streaming thread itself, from the bus sync handler, when the thread's task posts
/// `stream-status` ENTER (GStreamer posts that from the new thread), and undone on LEAVE (task threads come
/// from a pool and may later run an ordinary task). Needs CAP_SYS_NICE (root) or an rtprio limit; when the
/// kernel refuses, `report` is told once per thread and nothing else changes.
///
/// The policy is set with `SCHED_RESET_ON_FORK`: a thread created *by* a real-time thread inherits its policy
/// otherwise, and both a streaming thread (waking a Swift task makes libdispatch start a pool thread from the
/// caller; the first GSettings use starts GLib's "dconf worker") and a `RealtimeSection` create threads — which
/// then ran SCHED_FIFO for the rest of the process (seen on cold test runs: a cooperative-pool thread and
/// "dconf worker" at SCHED_FIFO after the player had stopped).
public struct RealtimeStreamThreads: Sendable {
    /// Names of the elements whose streaming tasks get real-time priority.
    public var owners: Set<String>
    /// SCHED_FIFO priority (1…99); low values stay below audio servers and kernel threads.
    public var priority: Int32
    /// Called on the streaming thread: owner name, and whether the kernel accepted the policy.
    public var report: @Sendable (_ owner: String, _ granted: Bool) -> Void

    public init(owners: Set<String>, priority: Int32 = 10,
                report: @escaping @Sendable (_ owner: String, _ granted: Bool) -> Void = { _, _ in }) {
        self.owners = owners; self.priority = priority; self.report = report
    }

    /// Applies or undoes the policy on the calling thread for a stream-status message: an owner's ENTER raises
    /// it; every other ENTER, and every LEAVE, puts it back to normal scheduling. Not only the owner's LEAVE: a
    /// pooled thread whose owner task's LEAVE never reached this handler (seen in full suite runs: two threads last
    /// running typefind tasks at SCHED_FIFO in a later test's process) would otherwise run every later task it is
    /// given in real time. Task starts and ends are rare (state changes), so one policy call each costs nothing.
    func apply(_ message: UnsafeMutablePointer<GstMessage>) {
        var type = GST_STREAM_STATUS_TYPE_CREATE
        var owner: UnsafeMutablePointer<GstElement>?
        gst_message_parse_stream_status(message, &type, &owner)
        guard let owner, let name = gstObjectName(UnsafeMutableRawPointer(owner)) else { return }
        var parameters = sched_param()
        switch type {
        case GST_STREAM_STATUS_TYPE_ENTER where owners.contains(name):
            parameters.sched_priority = priority
            report(name, pthread_setschedparam(pthread_self(), realtimePolicy, &parameters) == 0)
        case GST_STREAM_STATUS_TYPE_ENTER, GST_STREAM_STATUS_TYPE_LEAVE:
            parameters.sched_priority = 0
            _ = pthread_setschedparam(pthread_self(), Int32(SCHED_OTHER), &parameters)
        default:
            break
        }
    }
}

/// Runs a short, synchronous piece of work with the calling thread at real-time priority, then puts the
/// thread's own policy back. For deadline work on a shared thread (a Swift cooperative-pool thread starting
/// sinks before a start instant): at normal priority, decoders and demuxers filling their queues on the same
/// two cores pre-empt it for milliseconds. The body must not suspend (it is synchronous, so it cannot `await`)
/// and must be short: nothing else of normal priority runs on that core meanwhile. Without CAP_SYS_NICE the
/// policy change is refused and the body simply runs at the thread's priority.
public enum RealtimeSection {
    public static func run<T>(priority: Int32 = 10, _ body: () throws -> T) rethrows -> T {
        let thread = pthread_self()
        var policy: Int32 = 0
        var previous = sched_param()
        let known = pthread_getschedparam(thread, &policy, &previous) == 0
        var raised = sched_param()
        raised.sched_priority = priority
        let changed = known && policy & ~schedResetOnFork != Int32(SCHED_FIFO)
            && pthread_setschedparam(thread, realtimePolicy, &raised) == 0
        defer { if changed { _ = pthread_setschedparam(thread, policy, &previous) } }
        return try body()
    }
}

/// Linux's `SCHED_RESET_ON_FORK` (sched(7)), not exported by the Glibc module: or-ed into a policy, threads the
/// thread creates start at SCHED_OTHER instead of inheriting the real-time policy.
private let schedResetOnFork: Int32 = 0x4000_0000
/// SCHED_FIFO that new threads do not inherit (see `RealtimeStreamThreads`).
private let realtimePolicy = Int32(SCHED_FIFO) | schedResetOnFork

/// An owned `GstBus`. Messages are delivered by a *sync handler*: GStreamer calls it on the posting thread,
/// it copies the message into a `BusMessage` and yields it into an `AsyncStream`. Nothing polls; nothing is
/// dropped; order is the posting order as seen by the bus.
public final class Bus: ObjectRef, @unchecked Sendable {
    // Sendable: `pipelineIdentity` is immutable; `installed` is protected by a Mutex.
    private let pipelineIdentity: UnsafeMutableRawPointer?
    private let installed = Mutex(false)

    var bus: UnsafeMutablePointer<GstBus> { UnsafeMutableRawPointer(gobject).assumingMemoryBound(to: GstBus.self) }

    init(takingOwnershipOf raw: UnsafeMutablePointer<GstBus>, pipeline: Pipeline) {
        pipelineIdentity = UnsafeMutableRawPointer(pipeline.gobject)
        super.init(takingOwnershipOf: raw)
    }

    /// Marks the GstBus (not this wrapper) as having a consumer, so two wrappers of one bus cannot both
    /// install a handler and silently steal each other's messages.
    private static let consumerKey = "multiview-bus-consumer"

    deinit {
        // Only the wrapper that installed the handler removes it. Removing it makes GStreamer call our destroy
        // notify, which finishes the stream.
        if installed.withLock({ $0 }) {
            gst_bus_set_sync_handler(bus, nil, nil, nil)
            g_object_set_data(gobject, Bus.consumerKey, nil)
        }
    }

    /// The bus's messages as an async stream. One consumer per bus (fan out in Swift): a second call, through
    /// this or any other wrapper of the same bus, is a programming error. The stream finishes when this `Bus`
    /// is released, so keep it for as long as you read (`pipeline.bus().messages()` ends at once).
    ///
    /// `realtime`, when given, is applied to matching streaming threads as they start (see
    /// `RealtimeStreamThreads`).
    public func messages(realtime: RealtimeStreamThreads? = nil) -> AsyncStream<BusMessage> {
        let alreadyInstalled = installed.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        precondition(!alreadyInstalled && g_object_get_data(gobject, Bus.consumerKey) == nil,
                     "Bus.messages() has one consumer; fan out in Swift")
        g_object_set_data(gobject, Bus.consumerKey, UnsafeMutableRawPointer(bitPattern: 1))
        let (stream, continuation) = AsyncStream<BusMessage>.makeStream(bufferingPolicy: .unbounded)
        let box = Unmanaged.passRetained(SyncHandlerBox(continuation: continuation, pipeline: pipelineIdentity,
                                                         realtime: realtime))
        gst_bus_set_sync_handler(bus, Bus.syncHandler, box.toOpaque(), Bus.destroyNotify)
        return stream
    }

    final class SyncHandlerBox {
        let continuation: AsyncStream<BusMessage>.Continuation
        let pipeline: UnsafeMutableRawPointer?
        let realtime: RealtimeStreamThreads?
        init(continuation: AsyncStream<BusMessage>.Continuation, pipeline: UnsafeMutableRawPointer?,
             realtime: RealtimeStreamThreads?) {
            self.continuation = continuation
            self.pipeline = pipeline
            self.realtime = realtime
        }
        deinit { continuation.finish() }
    }

    static let syncHandler: GstBusSyncHandler = { _, message, userData in
        guard let message, let userData else { return GST_BUS_PASS }
        let box = Unmanaged<SyncHandlerBox>.fromOpaque(userData).takeUnretainedValue()
        if message.pointee.type == GST_MESSAGE_STREAM_STATUS, let realtime = box.realtime { realtime.apply(message) }
        // Before anything else can ask it again (see `AudioClockGuard`): a sink whose PulseAudio stream died.
        if message.pointee.type == GST_MESSAGE_ERROR { AudioClockGuard.noteError(postedBy: message.pointee.src) }
        box.continuation.yield(BusMessage(message, pipeline: box.pipeline))
        // A sync handler that returns DROP owns the message and must unref it (GstBusSyncHandler contract);
        // forgetting this leaks every message and, through its `src`, the pipeline.
        gst_message_unref(message)
        return GST_BUS_DROP
    }

    static let destroyNotify: GDestroyNotify = { userData in
        guard let userData else { return }
        Unmanaged<SyncHandlerBox>.fromOpaque(userData).release()
    }
}
