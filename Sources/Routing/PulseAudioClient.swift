import CPulse
import Foundation

/// A connection to a PulseAudio server over libpulse: the one owner of a threaded main loop and a context on it
/// (through its `PulseConnection`; nothing else in the project holds libpulse state).
///
/// Made by the explicit async `connect`, never in an initializer. Every request suspends the caller until the
/// server answers: the result callback runs on libpulse's own main-loop thread and resumes the caller's
/// continuation, so no cooperative-pool thread ever waits on libpulse (see `PulseConnection` for the locking).
/// Dropping the last reference disconnects and stops the main loop (on a short-lived thread of its own).
public final class PulseAudioClient: PulseAudioServer, Sendable {
    private let connection: PulseConnection

    private init(connection: PulseConnection) { self.connection = connection }

    /// Connects to `server` (nil: the one PULSE_SERVER names, or the default one); never autospawns a daemon.
    public static func connect(applicationName: String = "Multiview", server: String? = nil)
        async throws(PulseAudioError) -> PulseAudioClient {
        PulseAudioClient(connection: try await PulseConnection.open(applicationName: applicationName, server: server))
    }

    // MARK: Queries

    public func serverDefaultSinkName() async throws(PulseAudioError) -> String {
        try await connection.request(.serverInfo, initial: "") { context, data in
            pa_context_get_server_info(context, { context, info, data in
                let reply = PulseReply<String>.from(data)
                guard let info else { return reply.fail(lastError(context)) }
                reply.succeed(info.pointee.default_sink_name.map { String(cString: $0) } ?? "")
            }, data)
        }
    }

    public func sinks() async throws(PulseAudioError) -> [PulseSink] {
        try await connection.request(.listSinks, initial: []) { context, data in
            pa_context_get_sink_info_list(context, { context, info, eol, data in
                let reply = PulseReply<[PulseSink]>.from(data)
                if eol < 0 { return reply.fail(lastError(context)) }
                if eol > 0 { return reply.succeed() }
                guard let i = info?.pointee else { return }
                let sink = PulseSink(
                    index: i.index, name: string(i.name), description: string(i.description),
                    properties: properties(i.proplist), driver: string(i.driver),
                    monitorSource: string(i.monitor_source_name),
                    ownerModule: i.owner_module == invalidIndex ? nil : i.owner_module)
                reply.update { $0.append(sink) }
            }, data)
        }
    }

    public func sinkInputs() async throws(PulseAudioError) -> [PulseSinkInput] {
        try await connection.request(.listSinkInputs, initial: []) { context, data in
            pa_context_get_sink_input_info_list(context, { context, info, eol, data in
                let reply = PulseReply<[PulseSinkInput]>.from(data)
                if eol < 0 { return reply.fail(lastError(context)) }
                if eol > 0 { return reply.succeed() }
                guard var i = info?.pointee else { return }
                let input = PulseSinkInput(
                    index: i.index, name: string(i.name), sink: i.sink, properties: properties(i.proplist),
                    muted: i.mute != 0, corked: i.corked != 0,
                    volume: i.volume.channels == 0 ? 1 : pa_sw_volume_to_linear(pa_cvolume_avg(&i.volume)))
                reply.update { $0.append(input) }
            }, data)
        }
    }

    // MARK: Changes

    public func move(sinkInput: UInt32, toSink sink: String) async throws(PulseAudioError) {
        _ = try await connection.request(.move(sinkInput: sinkInput, sink: sink), initial: false) { context, data in
            sink.withCString { pa_context_move_sink_input_by_name(context, sinkInput, $0, successCallback, data) }
        }
    }

    public func setMute(sinkInput: UInt32, _ muted: Bool) async throws(PulseAudioError) {
        _ = try await connection.request(.mute(sinkInput: sinkInput, muted: muted), initial: false) { context, data in
            pa_context_set_sink_input_mute(context, sinkInput, muted ? 1 : 0, successCallback, data)
        }
    }

    /// Sets every channel of a stream to `linear` (1.0 = 100 %).
    public func setVolume(sinkInput: UInt32, linear: Double, channels: UInt8 = 2) async throws(PulseAudioError) {
        var volume = pa_cvolume()
        pa_cvolume_set(&volume, UInt32(channels), pa_sw_volume_from_linear(max(0, linear)))
        _ = try await connection.request(.setVolume(sinkInput: sinkInput), initial: false) { context, data in
            pa_context_set_sink_input_volume(context, sinkInput, &volume, successCallback, data)
        }
    }

    /// Loads a module (e.g. `module-null-sink`) and returns its index.
    @discardableResult
    public func loadModule(_ name: String, arguments: String) async throws(PulseAudioError) -> UInt32 {
        try await connection.request(.loadModule(name: name, arguments: arguments), initial: invalidIndex) { context, data in
            pa_context_load_module(context, name, arguments, { context, index, data in
                let reply = PulseReply<UInt32>.from(data)
                if index == invalidIndex { reply.fail(lastError(context)) } else { reply.succeed(index) }
            }, data)
        }
    }

    public func unloadModule(_ index: UInt32) async throws(PulseAudioError) {
        _ = try await connection.request(.unloadModule(index), initial: false) { context, data in
            pa_context_unload_module(context, index, successCallback, data)
        }
    }

    // MARK: Events

    public func events() -> AsyncStream<PulseEvent> { connection.hub.subscribe() }

    /// Whether the connection is up.
    public var isConnected: Bool { connection.isReady }
}

// MARK: - Result callbacks (libpulse thread, main-loop lock held)

/// PA_INVALID_INDEX ((uint32_t) -1) does not import into Swift.
private let invalidIndex = UInt32.max

/// The context's error after a failed request.
private func lastError(_ context: OpaquePointer?) -> PulseErrorCode { PulseErrorCode(pulseErrno: pa_context_errno(context)) }

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
private let successCallback: pa_context_success_cb_t = { context, success, data in
    let reply = PulseReply<Bool>.from(data)
    if success != 0 { reply.succeed(true) } else { reply.fail(lastError(context)) }
}
