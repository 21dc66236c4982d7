import CGStreamer
import Synchronization

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
    public func messages() -> AsyncStream<BusMessage> {
        let alreadyInstalled = installed.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        precondition(!alreadyInstalled && g_object_get_data(gobject, Bus.consumerKey) == nil,
                     "Bus.messages() has one consumer; fan out in Swift")
        g_object_set_data(gobject, Bus.consumerKey, UnsafeMutableRawPointer(bitPattern: 1))
        let (stream, continuation) = AsyncStream<BusMessage>.makeStream(bufferingPolicy: .unbounded)
        let box = Unmanaged.passRetained(SyncHandlerBox(continuation: continuation, pipeline: pipelineIdentity))
        gst_bus_set_sync_handler(bus, Bus.syncHandler, box.toOpaque(), Bus.destroyNotify)
        return stream
    }

    final class SyncHandlerBox {
        let continuation: AsyncStream<BusMessage>.Continuation
        let pipeline: UnsafeMutableRawPointer?
        init(continuation: AsyncStream<BusMessage>.Continuation, pipeline: UnsafeMutableRawPointer?) {
            self.continuation = continuation
            self.pipeline = pipeline
        }
        deinit { continuation.finish() }
    }

    static let syncHandler: GstBusSyncHandler = { _, message, userData in
        guard let message, let userData else { return GST_BUS_PASS }
        let box = Unmanaged<SyncHandlerBox>.fromOpaque(userData).takeUnretainedValue()
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
