import CPulse
import Foundation
import Synchronization

/// A PulseAudio sink as the server describes it.
public struct PulseSink: Sendable, Equatable {
    public var index: UInt32
    public var name: String
    public var description: String
    /// The sink's property list (`device.description`, `multiview.non-mixable`, `raop.*`, …).
    public var properties: [String: String]
    /// The module source file that implements it (`module-null-sink.c`, `raop-sink.c`, …).
    public var driver: String
    public var monitorSource: String
    public var ownerModule: UInt32?
}

/// A playback stream (sink input) as the server describes it.
public struct PulseSinkInput: Sendable, Equatable {
    public var index: UInt32
    public var name: String
    /// Index of the sink it plays to.
    public var sink: UInt32
    public var properties: [String: String]
    public var muted: Bool
    public var corked: Bool
    /// Average channel volume, linear (1.0 = 100 %).
    public var volume: Double
}

/// What a subscription reports (PulseAudio's own event facilities, typed).
public enum PulseEvent: Sendable, Equatable {
    case sinkAdded(UInt32), sinkRemoved(UInt32), sinkChanged(UInt32)
    case sinkInputAdded(UInt32), sinkInputRemoved(UInt32), sinkInputChanged(UInt32)
    /// Default sink or server settings changed.
    case serverChanged
    /// The connection to the server was lost (server stopped or restarted).
    case disconnected
}

public enum PulseAudioError: Error, Equatable, CustomStringConvertible {
    /// No server answered (not running, wrong PULSE_SERVER, no permission).
    case unreachable(String)
    /// The connection is gone (the server stopped or restarted).
    case disconnected
    /// The server refused a request.
    case failed(operation: String, reason: String)

    public var description: String {
        switch self {
        case .unreachable(let why): return "PulseAudio is not reachable: \(why)"
        case .disconnected: return "the connection to PulseAudio was lost"
        case .failed(let operation, let reason): return "PulseAudio refused to \(operation): \(reason)"
        }
    }
}

/// The one owner of a libpulse connection: a threaded main loop and a context on it.
///
/// Threading: libpulse runs its own thread (the threaded main loop). Every call into the context happens with
/// the main loop's lock held; the result callbacks run on that thread with the lock held too, write into a
/// `Collector` and signal; the requesting thread waits (`pa_threaded_mainloop_wait` releases the lock) until the
/// operation is done or the context died, then reads the collector still under the lock. So the main-loop lock is
/// the owner of all libpulse state and of every collector. Requests are short round trips on a local socket, so
/// the public methods are synchronous; they must never be called from the libpulse thread (no callback of ours
/// calls them: subscription events leave that thread through an `AsyncStream`).
public final class PulseAudioClient: Sendable {
    private let core: Core

    /// Connects to `server` (nil: the one PULSE_SERVER names, or the default one); never autospawns a daemon.
    public init(applicationName: String = "Multiview", server: String? = nil) throws {
        core = try Core(applicationName: applicationName, server: server)
    }

    // MARK: Queries

    public func serverDefaultSinkName() throws -> String {
        let collector = Collector<String>(core.mainloop, "")
        try core.run("get server info", collector) { context, data in
            pa_context_get_server_info(context, { _, info, data in
                let collector = Collector<String>.from(data)
                if let info, let name = info.pointee.default_sink_name { collector.value = String(cString: name) }
                collector.finish()
            }, data)
        }
        return collector.value
    }

    public func sinks() throws -> [PulseSink] {
        let collector = Collector<[PulseSink]>(core.mainloop, [])
        try core.run("list sinks", collector) { context, data in
            pa_context_get_sink_info_list(context, { _, info, eol, data in
                let collector = Collector<[PulseSink]>.from(data)
                if eol != 0 { collector.finish(); return }
                guard let i = info?.pointee else { return }
                collector.value.append(PulseSink(
                    index: i.index, name: string(i.name), description: string(i.description),
                    properties: properties(i.proplist), driver: string(i.driver),
                    monitorSource: string(i.monitor_source_name),
                    ownerModule: i.owner_module == invalidIndex ? nil : i.owner_module))
            }, data)
        }
        return collector.value
    }

    public func sinkInputs() throws -> [PulseSinkInput] {
        let collector = Collector<[PulseSinkInput]>(core.mainloop, [])
        try core.run("list sink inputs", collector) { context, data in
            pa_context_get_sink_input_info_list(context, { _, info, eol, data in
                let collector = Collector<[PulseSinkInput]>.from(data)
                if eol != 0 { collector.finish(); return }
                guard var i = info?.pointee else { return }
                collector.value.append(PulseSinkInput(
                    index: i.index, name: string(i.name), sink: i.sink, properties: properties(i.proplist),
                    muted: i.mute != 0, corked: i.corked != 0,
                    volume: i.volume.channels == 0 ? 1 : pa_sw_volume_to_linear(pa_cvolume_avg(&i.volume))))
            }, data)
        }
        return collector.value
    }

    // MARK: Changes

    /// Moves a stream to another sink (the server rewinds, so the move is heard at once).
    public func move(sinkInput: UInt32, toSink sink: String) throws {
        let collector = Collector<Bool>(core.mainloop, false)
        try core.run("move stream \(sinkInput) to \(sink)", collector) { context, data in
            sink.withCString { pa_context_move_sink_input_by_name(context, sinkInput, $0, successCallback, data) }
        }
        try check(collector, "move stream \(sinkInput) to \(sink)")
    }

    public func setMute(sinkInput: UInt32, _ muted: Bool) throws {
        let collector = Collector<Bool>(core.mainloop, false)
        try core.run("mute stream \(sinkInput)", collector) { context, data in
            pa_context_set_sink_input_mute(context, sinkInput, muted ? 1 : 0, successCallback, data)
        }
        try check(collector, "mute stream \(sinkInput)")
    }

    /// Sets every channel of a stream to `linear` (1.0 = 100 %).
    public func setVolume(sinkInput: UInt32, linear: Double, channels: UInt8 = 2) throws {
        let collector = Collector<Bool>(core.mainloop, false)
        var volume = pa_cvolume()
        pa_cvolume_set(&volume, UInt32(channels), pa_sw_volume_from_linear(max(0, linear)))
        try core.run("set the volume of stream \(sinkInput)", collector) { context, data in
            pa_context_set_sink_input_volume(context, sinkInput, &volume, successCallback, data)
        }
        try check(collector, "set the volume of stream \(sinkInput)")
    }

    /// Loads a module (e.g. `module-null-sink`) and returns its index.
    @discardableResult
    public func loadModule(_ name: String, arguments: String) throws -> UInt32 {
        let collector = Collector<UInt32>(core.mainloop, invalidIndex)
        try core.run("load \(name)", collector) { context, data in
            pa_context_load_module(context, name, arguments, { _, index, data in
                let collector = Collector<UInt32>.from(data)
                collector.value = index
                collector.finish()
            }, data)
        }
        guard collector.value != invalidIndex else {
            throw PulseAudioError.failed(operation: "load \(name) \(arguments)", reason: core.lastError())
        }
        return collector.value
    }

    public func unloadModule(_ index: UInt32) throws {
        let collector = Collector<Bool>(core.mainloop, false)
        try core.run("unload module \(index)", collector) { context, data in
            pa_context_unload_module(context, index, successCallback, data)
        }
        try check(collector, "unload module \(index)")
    }

    // MARK: Events

    /// Sink and sink-input additions, removals and changes, server changes, and loss of the connection.
    public func events() -> AsyncStream<PulseEvent> { core.subscribe() }

    /// Whether the connection is up.
    public var isConnected: Bool { core.isReady }

    private func check(_ collector: Collector<Bool>, _ operation: String) throws {
        if !collector.value { throw PulseAudioError.failed(operation: operation, reason: core.lastError()) }
    }
}

// MARK: - Internals

/// PA_INVALID_INDEX ((uint32_t) -1) does not import into Swift.
private let invalidIndex = UInt32.max

private func string(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

private func properties(_ list: OpaquePointer?) -> [String: String] {
    guard let list else { return [:] }
    var result: [String: String] = [:]
    var state: UnsafeMutableRawPointer?
    while let key = pa_proplist_iterate(list, &state) {
        if let value = pa_proplist_gets(list, key) { result[String(cString: key)] = String(cString: value) }
    }
    return result
}

/// The result callback shared by every request that answers success or failure.
private let successCallback: pa_context_success_cb_t = { _, success, data in
    let collector = Collector<Bool>.from(data)
    collector.value = success != 0
    collector.finish()
}

/// Where one request's callbacks put their answer. Owned by the main-loop lock (see `PulseAudioClient`): written
/// by callbacks on the libpulse thread and read by the requester, both with the lock held.
private final class Collector<Value>: @unchecked Sendable {
    var value: Value
    private let mainloop: OpaquePointer
    init(_ mainloop: OpaquePointer, _ initial: Value) { self.mainloop = mainloop; self.value = initial }
    static func from(_ data: UnsafeMutableRawPointer?) -> Collector { Unmanaged<Collector>.fromOpaque(data!).takeUnretainedValue() }
    func finish() { pa_threaded_mainloop_signal(mainloop, 0) }
}

/// The main loop, the context and the event subscribers.
/// `@unchecked Sendable`: `mainloop`/`context` are immutable pointers used only with the main-loop lock held
/// (libpulse's rule for threaded main loops); `subscribers` is a `Mutex`.
private final class Core: @unchecked Sendable {
    let mainloop: OpaquePointer
    private let context: OpaquePointer
    private let subscribers = Mutex<[Int: AsyncStream<PulseEvent>.Continuation]>([:])
    private let nextSubscriber = Atomic<Int>(0)

    init(applicationName: String, server: String?) throws {
        guard let mainloop = pa_threaded_mainloop_new() else { throw PulseAudioError.unreachable("no main loop") }
        self.mainloop = mainloop
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(mainloop), applicationName) else {
            pa_threaded_mainloop_free(mainloop)
            throw PulseAudioError.unreachable("no context")
        }
        self.context = context
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_state_callback(context, { context, data in
            let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
            let state = pa_context_get_state(context)
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { core.broadcast(.disconnected) }
            pa_threaded_mainloop_signal(core.mainloop, 0)
        }, me)
        pa_context_set_subscribe_callback(context, { _, type, index, data in
            let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
            if let event = Core.event(type.rawValue, index) { core.broadcast(event) }
        }, me)
        pa_threaded_mainloop_lock(mainloop)
        var failure: String?
        if pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            failure = String(cString: pa_strerror(pa_context_errno(context)))
        } else if pa_threaded_mainloop_start(mainloop) < 0 {
            failure = "cannot start the main loop thread"
        } else {
            while true {
                let state = pa_context_get_state(context)
                if state == PA_CONTEXT_READY { break }
                if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
                    failure = String(cString: pa_strerror(pa_context_errno(context)))
                    break
                }
                pa_threaded_mainloop_wait(mainloop)
            }
        }
        if failure == nil {
            let mask = PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue
                | PA_SUBSCRIPTION_MASK_SERVER.rawValue
            if let op = pa_context_subscribe(context, pa_subscription_mask_t(rawValue: mask), nil, nil) {
                pa_operation_unref(op)
            }
        }
        pa_threaded_mainloop_unlock(mainloop)
        if let failure {
            teardown()
            throw PulseAudioError.unreachable(failure)
        }
    }

    deinit { teardown() }

    private var torndown = false
    private func teardown() {
        guard !torndown else { return }
        torndown = true
        pa_threaded_mainloop_lock(mainloop)
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_threaded_mainloop_unlock(mainloop)
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
        subscribers.withLock { for (_, c) in $0 { c.finish() }; $0 = [:] }
    }

    var isReady: Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return pa_context_get_state(context) == PA_CONTEXT_READY
    }

    func lastError() -> String {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        return String(cString: pa_strerror(pa_context_errno(context)))
    }

    /// Starts one request under the lock and waits until it is done (or the connection died).
    func run<Value>(_ what: String, _ collector: Collector<Value>,
                    _ start: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) throws {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard pa_context_get_state(context) == PA_CONTEXT_READY else { throw PulseAudioError.disconnected }
        let data = Unmanaged.passUnretained(collector).toOpaque()
        let started = withExtendedLifetime(collector) { start(context, data) }
        guard let operation = started else {
            throw PulseAudioError.failed(operation: what, reason: String(cString: pa_strerror(pa_context_errno(context))))
        }
        defer { pa_operation_unref(operation) }
        // The collector stays alive until here: the operation is done or cancelled before we return.
        try withExtendedLifetime(collector) {
            while pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
                if pa_context_get_state(context) != PA_CONTEXT_READY {
                    pa_operation_cancel(operation)
                    throw PulseAudioError.disconnected
                }
                pa_threaded_mainloop_wait(mainloop)
            }
        }
        if pa_operation_get_state(operation) == PA_OPERATION_CANCELLED { throw PulseAudioError.disconnected }
    }

    func subscribe() -> AsyncStream<PulseEvent> {
        let (stream, continuation) = AsyncStream<PulseEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextSubscriber.add(1, ordering: .relaxed).newValue
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { $0[id] = nil } }
        return stream
    }

    private func broadcast(_ event: PulseEvent) {
        subscribers.withLock { for (_, c) in $0 { c.yield(event) } }
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
