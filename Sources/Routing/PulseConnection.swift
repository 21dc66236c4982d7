import CPulse
import Foundation
import Synchronization

/// The libpulse side of `PulseAudioClient`: one threaded main loop, one context on it, and the bridge from
/// libpulse's callbacks to Swift continuations.
///
/// Threading (libpulse's rule for threaded main loops): the main loop runs its own thread; every call into the
/// context happens with the main loop's lock held, and every callback runs on that thread with the lock held. A
/// caller takes the lock only to *start* a request (a few microseconds; the loop thread holds it only while it
/// dispatches our short callbacks) and then suspends on a continuation; the request's result callback, on the
/// libpulse thread, resumes it. Nothing ever waits on the loop (`pa_threaded_mainloop_wait` is not used), so no
/// cooperative-pool thread blocks on libpulse. Stopping the loop joins its thread, so `deinit` hands the teardown
/// to a short-lived thread of its own.
///
/// `@unchecked Sendable`: `mainloop` and `context` are immutable pointers used only with the main-loop lock held
/// (or, in the teardown, after the loop has stopped); `hub` is `Sendable`.
final class PulseConnection: @unchecked Sendable {
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    let hub = PulseEventHub()
    /// `hub`, retained for the context's callbacks; released by the teardown after the callbacks are cleared.
    private let hubPointer: UnsafeMutableRawPointer

    /// Makes the main loop and the context and connects (never autospawning a daemon); returns once the context is
    /// ready (subscribed to sink, sink-input and server events) or throws `.unreachable`.
    static func open(applicationName: String, server: String?) async throws(PulseAudioError) -> PulseConnection {
        let connection = try PulseConnection(applicationName: applicationName)
        try await connection.connect(server: server)
        return connection
    }

    private init(applicationName: String) throws(PulseAudioError) {
        guard let mainloop = pa_threaded_mainloop_new() else { throw .unreachable(.other(-1)) }
        // Told apart from pulsesink's loop ("threaded-ml") in a thread list (`PulseMainLoopKeeperTests`, gdb).
        pa_threaded_mainloop_set_name(mainloop, "mv-pulse-ctl")
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), applicationName) else {
            pa_threaded_mainloop_free(mainloop)
            throw .unreachable(.other(-1))
        }
        self.mainloop = mainloop
        self.context = context
        hubPointer = Unmanaged.passRetained(hub).toOpaque()
        pa_context_set_state_callback(context, contextStateChanged, hubPointer)
        pa_context_set_subscribe_callback(context, { _, type, index, data in
            guard let data, let event = PulseConnection.event(type.rawValue, index) else { return }
            Unmanaged<PulseEventHub>.fromOpaque(data).takeUnretainedValue().broadcast(event)
        }, hubPointer)
    }

    private func connect(server: String?) async throws(PulseAudioError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, PulseAudioError>, Never>) in
            hub.awaitConnection(continuation)
            pa_threaded_mainloop_lock(mainloop)
            defer { pa_threaded_mainloop_unlock(mainloop) }
            if pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
                hub.connectionSettled(.failure(.unreachable(PulseErrorCode(pulseErrno: pa_context_errno(context)))))
            } else if pa_threaded_mainloop_start(mainloop) < 0 {
                hub.connectionSettled(.failure(.unreachable(.other(-1))))
            }
        }
        try result.get()
    }

    deinit {
        let resources = Resources(mainloop: mainloop, context: context, hub: hubPointer)
        Thread { resources.release() }.start()
    }

    /// Whether the context is connected and ready.
    var isReady: Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return pa_context_get_state(context) == PA_CONTEXT_READY
    }

    /// Runs one request: `start` begins it (lock held) with `data` as the user data of its result callback, which
    /// answers through `PulseReply<Value>.from(data)`. Suspends until the answer, or `.disconnected` when the
    /// connection dies first (libpulse cancels the operation).
    func request<Value: Sendable>(_ operation: PulseOperation, initial: Value,
                                  _ start: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?)
        async throws(PulseAudioError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, PulseAudioError>, Never>) in
            let reply = PulseReply(operation, initial: initial, continuation: continuation)
            // Released by the operation's state callback when it is done or cancelled (or below when it never began).
            let data = Unmanaged.passRetained(reply as PulseRequest).toOpaque()
            pa_threaded_mainloop_lock(mainloop)
            defer { pa_threaded_mainloop_unlock(mainloop) }
            guard pa_context_get_state(context) == PA_CONTEXT_READY else {
                reply.end(.disconnected)
                Unmanaged<PulseRequest>.fromOpaque(data).release()
                return
            }
            guard let started = start(context, data) else {
                reply.end(.failed(operation, PulseErrorCode(pulseErrno: pa_context_errno(context))))
                Unmanaged<PulseRequest>.fromOpaque(data).release()
                return
            }
            pa_operation_set_state_callback(started, operationStateChanged, data)
            pa_operation_unref(started)   // the context keeps its own reference until the operation ends
        }
        return try result.get()
    }

    private static func event(_ type: UInt32, _ index: UInt32) -> PulseEvent? {
        let facility = type & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let kind = type & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        let new = kind == PA_SUBSCRIPTION_EVENT_NEW.rawValue, removed = kind == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
            return new ? .sinkAdded(index) : removed ? .sinkRemoved(index) : .sinkChanged(index)
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
            return new ? .sinkInputAdded(index) : removed ? .sinkInputRemoved(index) : .sinkInputChanged(index)
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
            return .serverChanged
        default:
            return nil
        }
    }
}

/// The pointers a connection frees, handed to the teardown thread.
/// `@unchecked Sendable`: moved to exactly one thread, which is then their only user (the connection is gone).
private struct Resources: @unchecked Sendable {
    let mainloop: OpaquePointer
    let context: OpaquePointer
    let hub: UnsafeMutableRawPointer

    func release() {
        pa_threaded_mainloop_lock(mainloop)
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
        let hub = Unmanaged<PulseEventHub>.fromOpaque(self.hub)
        hub.takeUnretainedValue().finishAll()
        hub.release()
    }
}

/// The context's state callback (libpulse thread, lock held): ready → subscribe and finish connecting; failed or
/// terminated → fail the connection attempt, or, once connected, tell the subscribers the connection is gone.
private let contextStateChanged: pa_context_notify_cb_t = { context, data in
    guard let context, let data else { return }
    let hub = Unmanaged<PulseEventHub>.fromOpaque(data).takeUnretainedValue()
    let state = pa_context_get_state(context)
    if state == PA_CONTEXT_READY {
        let mask = PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue
            | PA_SUBSCRIPTION_MASK_SERVER.rawValue
        if let operation = pa_context_subscribe(context, pa_subscription_mask_t(rawValue: mask), nil, nil) {
            pa_operation_unref(operation)
        }
        hub.connectionSettled(.success(()))
    } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
        let code = PulseErrorCode(pulseErrno: pa_context_errno(context))
        if !hub.connectionSettled(.failure(.unreachable(code))) { hub.broadcast(.disconnected) }
    }
}

/// An operation's state callback (libpulse thread, lock held): when it ends, the request is answered if its result
/// callback has not done so (cancelled: the connection died) and our retain of it is released.
private let operationStateChanged: pa_operation_notify_cb_t = { operation, data in
    guard let operation, let data else { return }
    let state = pa_operation_get_state(operation)
    guard state != PA_OPERATION_RUNNING else { return }
    let request = Unmanaged<PulseRequest>.fromOpaque(data)
    let pending = request.takeUnretainedValue()
    pending.end(state == PA_OPERATION_CANCELLED
        ? .disconnected : .failed(pending.operation, PulseErrorCode(pulseErrno: Int32(PA_ERR_UNKNOWN.rawValue))))
    request.release()
}

/// What the context's callbacks reach: the pending connection attempt and the event subscribers.
/// Each piece of state is a `Mutex`: written from the libpulse thread and from callers.
final class PulseEventHub: Sendable {
    private let connecting = Mutex<CheckedContinuation<Result<Void, PulseAudioError>, Never>?>(nil)
    private let subscribers = Mutex<[Int: AsyncStream<PulseEvent>.Continuation]>([:])
    private let nextSubscriber = Atomic<Int>(0)

    func awaitConnection(_ continuation: CheckedContinuation<Result<Void, PulseAudioError>, Never>) {
        connecting.withLock { $0 = continuation }
    }

    /// Answers the connection attempt; false when there was none pending (already connected).
    @discardableResult
    func connectionSettled(_ result: Result<Void, PulseAudioError>) -> Bool {
        guard let continuation = connecting.withLock({ $0.take() }) else { return false }
        continuation.resume(returning: result)
        return true
    }

    func subscribe() -> AsyncStream<PulseEvent> {
        let (stream, continuation) = AsyncStream<PulseEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextSubscriber.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { $0[id] = nil } }
        return stream
    }

    func broadcast(_ event: PulseEvent) {
        subscribers.withLock { for (_, c) in $0 { c.yield(event) } }
    }

    func finishAll() {
        let all = subscribers.withLock { s in defer { s = [:] }; return s }
        for (_, c) in all { c.finish() }
    }
}

/// One request in flight. Non-generic so the operation's state callback (a C function) can end any request.
/// `@unchecked Sendable`: subclasses keep their mutable state in a `Mutex`.
class PulseRequest: @unchecked Sendable {
    let operation: PulseOperation
    init(_ operation: PulseOperation) { self.operation = operation }
    /// Answers with `failure` unless already answered.
    func end(_ failure: PulseAudioError) {}
}

/// A request's answer being collected (list callbacks append, one item per call) and its continuation, resumed
/// exactly once: by the result callback, or by `end` when the operation ends without one.
final class PulseReply<Value: Sendable>: PulseRequest, @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Value, PulseAudioError>, Never>?
        var value: Value
    }
    private let state: Mutex<State>

    init(_ operation: PulseOperation, initial: Value, continuation: CheckedContinuation<Result<Value, PulseAudioError>, Never>) {
        state = Mutex(State(continuation: continuation, value: initial))
        super.init(operation)
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> PulseReply { Unmanaged<PulseReply>.fromOpaque(data!).takeUnretainedValue() }

    func update(_ change: (inout Value) -> Void) { state.withLock { change(&$0.value) } }

    func succeed() { answer { .success($0) } }
    func succeed(_ value: Value) { answer { _ in .success(value) } }
    func fail(_ code: PulseErrorCode) { let operation = operation; answer { _ in .failure(.failed(operation, code)) } }
    override func end(_ failure: PulseAudioError) { answer { _ in .failure(failure) } }

    private func answer(_ result: (Value) -> Result<Value, PulseAudioError>) {
        let taken = state.withLock { s -> (CheckedContinuation<Result<Value, PulseAudioError>, Never>, Value)? in
            guard let c = s.continuation.take() else { return nil }
            return (c, s.value)
        }
        if let (continuation, value) = taken { continuation.resume(returning: result(value)) }
    }
}

extension PulseErrorCode {
    /// The one place a libpulse error number (`pa_context_errno`) becomes a typed code.
    init(pulseErrno code: Int32) {
        switch UInt32(bitPattern: code) {
        case PA_ERR_ACCESS.rawValue: self = .accessDenied
        case PA_ERR_INVALID.rawValue: self = .invalidArgument
        case PA_ERR_EXIST.rawValue: self = .alreadyExists
        case PA_ERR_NOENTITY.rawValue: self = .noSuchEntity
        case PA_ERR_CONNECTIONREFUSED.rawValue: self = .connectionRefused
        case PA_ERR_PROTOCOL.rawValue: self = .protocolError
        case PA_ERR_TIMEOUT.rawValue: self = .timeout
        case PA_ERR_AUTHKEY.rawValue: self = .noAuthenticationKey
        case PA_ERR_CONNECTIONTERMINATED.rawValue: self = .connectionTerminated
        case PA_ERR_KILLED.rawValue: self = .killed
        case PA_ERR_INVALIDSERVER.rawValue: self = .invalidServer
        case PA_ERR_MODINITFAILED.rawValue: self = .moduleInitFailed
        case PA_ERR_BADSTATE.rawValue: self = .badState
        case PA_ERR_NOTSUPPORTED.rawValue: self = .notSupported
        case PA_ERR_IO.rawValue: self = .io
        case PA_ERR_BUSY.rawValue: self = .busy
        default: self = .other(code)
        }
    }
}
