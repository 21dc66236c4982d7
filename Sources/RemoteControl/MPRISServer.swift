import CGIO
import Foundation
import GStreamer
import Synchronization

/// Why the MPRIS2 server could not start.
public enum MPRISError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No session bus reachable (DBUS_SESSION_BUS_ADDRESS unset or dead).
    case noSessionBus(String)
    /// The connection refused the object registration.
    case registration(String)
    /// Neither the plain name nor the per-instance name could be owned.
    case nameNotOwned(String)

    public var description: String {
        switch self {
        case .noSessionBus(let m): return "no D-Bus session bus: \(m)"
        case .registration(let m): return "cannot register the MPRIS2 object: \(m)"
        case .nameNotOwned(let n): return "cannot own the bus name \(n)"
        }
    }
}

/// An MPRIS2 server on the session bus: `org.mpris.MediaPlayer2.<name>` (or `….<name>.instance<pid>` when that
/// name is taken) with the `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player` interfaces at
/// `/org/mpris/MediaPlayer2`, through GIO's GDBus.
///
/// Threading: one `GLibLoopThread` is the serial owner of everything D-Bus — the private connection, the two
/// object registrations and the name ownership are created, used and released only inside its `invoke`, and
/// GDBus calls the vtable and the name callbacks on it. The published `NowPlaying` and the position reader live
/// in a `Mutex` (written by `RemoteControl`, read by property gets on the loop thread). Commands leave as an
/// `AsyncStream` (the loop thread only yields). The method reply is sent at once: the command then acts on the
/// players asynchronously, and the resulting state arrives as PropertiesChanged.
public final class MPRISServer: Sendable {
    public static let objectPath = "/org/mpris/MediaPlayer2"
    public static let rootInterface = "org.mpris.MediaPlayer2"
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"

    /// The bus name actually owned.
    public let busName: String
    public let identity: String
    public let commands: AsyncStream<RemoteCommand>

    private let loop: GLibLoopThread
    private let continuation: AsyncStream<RemoteCommand>.Continuation
    private let published = Mutex<NowPlaying>(NowPlaying())
    private let positionReader = Mutex<(@Sendable () -> ClockTime?)?>(nil)
    private let stopped = Mutex<Bool>(false)
    /// D-Bus handles: touched only on the loop thread (boxed so this class stays Sendable).
    private let handles: LoopOwned<Handles>

    struct Handles {
        var connection: OpaquePointer?
        var nodeInfo: UnsafeMutablePointer<GDBusNodeInfo>?
        var registrations: [guint] = []
        var ownerID: guint = 0
        var vtable: UnsafeMutablePointer<GDBusInterfaceVTable>?
        var onName: ((Bool) -> Void)?
    }

    private init(busName: String, identity: String, loop: GLibLoopThread, handles: LoopOwned<Handles>) {
        self.busName = busName
        self.identity = identity
        self.loop = loop
        self.handles = handles
        (commands, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// Connects to the session bus, registers the object and owns `org.mpris.MediaPlayer2.<name>`, falling back to
    /// `org.mpris.MediaPlayer2.<name>.instance<pid>` when another player already has the plain name.
    public static func start(name: String = "multiview", identity: String = "Multiview") async throws -> MPRISServer {
        let loop = GLibLoopThread(name: "multiview-dbus")
        let handles = LoopOwned(Handles())
        // Connection and registration, on the loop thread (registration binds callbacks to its context).
        do {
            try await loop.run { try Self.connect(handles) }
        } catch {
            loop.quit()
            throw error
        }
        let plain = "org.mpris.MediaPlayer2.\(name)"
        let candidates = [plain, "\(plain).instance\(ProcessInfo.processInfo.processIdentifier)"]
        var owned: String?
        for candidate in candidates where owned == nil {
            if try await own(candidate, handles: handles, loop: loop) { owned = candidate }
        }
        guard let owned else {
            await closeAll(handles, loop: loop)
            throw MPRISError.nameNotOwned(plain)
        }
        let server = MPRISServer(busName: owned, identity: identity, loop: loop, handles: handles)
        // The vtable's user data is the server, unretained: `stop` unregisters before the server can go away.
        try await loop.run { try server.register() }
        return server
    }

    /// Unregisters, releases the name and closes the connection. Idempotent.
    public func stop() async {
        // Once only: after the first stop the loop thread is gone and could not run a second close.
        guard stopped.withLock({ let was = $0; $0 = true; return !was }) else { return }
        continuation.finish()
        await Self.closeAll(handles, loop: loop)
    }

    // MARK: Publishing (any thread)

    /// Changes what is published; emits PropertiesChanged with exactly the properties that changed (none: nothing).
    public func update(_ change: (inout NowPlaying) -> Void) {
        let (old, new) = published.withLock { state -> (NowPlaying, NowPlaying) in
            let old = state
            change(&state)
            return (old, state)
        }
        let changed = new.changedProperties(since: old)
        guard !changed.isEmpty else { return }
        loop.invoke { [handles] in
            guard let connection = handles.value.connection else { return }
            let parameters = GVariantBuilding.tuple([
                g_variant_new_string(MPRISServer.playerInterface),
                GVariantBuilding.dictionary(changed),
                GVariantBuilding.make(.strings([])),
            ])
            g_dbus_connection_emit_signal(connection, nil, MPRISServer.objectPath, "org.freedesktop.DBus.Properties",
                                          "PropertiesChanged", parameters, nil)
        }
    }

    public var nowPlaying: NowPlaying { published.withLock { $0 } }

    /// Where `Position` is read from when a client asks (the focused view's pipeline).
    public func setPositionReader(_ reader: (@Sendable () -> ClockTime?)?) {
        positionReader.withLock { $0 = reader }
    }

    /// MPRIS `Seeked(x Position)`: the position jumped (seek, coordinated jump).
    public func emitSeeked(_ position: ClockTime) {
        let microseconds = Int64(position.nanoseconds / 1000)
        loop.invoke { [handles] in
            guard let connection = handles.value.connection else { return }
            let parameters = GVariantBuilding.tuple([GVariantBuilding.make(.int64(microseconds))])
            g_dbus_connection_emit_signal(connection, nil, MPRISServer.objectPath, MPRISServer.playerInterface,
                                          "Seeked", parameters, nil)
        }
    }

    // MARK: Loop thread only

    private static func connect(_ handles: LoopOwned<Handles>) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let address = g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            throw MPRISError.noSessionBus(takeMessage(&error) ?? "no address")
        }
        defer { g_free(address) }
        // A private connection (not the process-wide shared one): closing it releases our name and objects, and
        // two servers in one process are two clients, as two processes would be.
        let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                         | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            throw MPRISError.noSessionBus(takeMessage(&error) ?? "cannot connect")
        }
        g_dbus_connection_set_exit_on_close(connection, 0)
        guard let node = g_dbus_node_info_new_for_xml(MPRISIntrospection.xml, &error) else {
            g_object_unref(UnsafeMutableRawPointer(connection))
            throw MPRISError.registration(takeMessage(&error) ?? "bad introspection XML")
        }
        handles.value.connection = connection
        handles.value.nodeInfo = node
    }

    private func register() throws {
        guard let connection = handles.value.connection, let node = handles.value.nodeInfo else {
            throw MPRISError.registration("not connected")
        }
        let vtable = UnsafeMutablePointer<GDBusInterfaceVTable>.allocate(capacity: 1)
        vtable.initialize(to: GDBusInterfaceVTable(
            method_call: MPRISTrampolines.methodCall, get_property: MPRISTrampolines.getProperty,
            set_property: MPRISTrampolines.setProperty,
            padding: (nil, nil, nil, nil, nil, nil, nil, nil)))
        handles.value.vtable = vtable
        let me = Unmanaged.passUnretained(self).toOpaque()
        for interface in [Self.rootInterface, Self.playerInterface] {
            guard let info = g_dbus_node_info_lookup_interface(node, interface) else {
                throw MPRISError.registration("no \(interface) in the introspection XML")
            }
            var error: UnsafeMutablePointer<GError>?
            let id = g_dbus_connection_register_object(connection, Self.objectPath, info, vtable, me, nil, &error)
            if id == 0 { throw MPRISError.registration(Self.takeMessage(&error) ?? interface) }
            handles.value.registrations.append(id)
        }
    }

    /// Owns `name` (not queued: taken means taken); true when acquired.
    private static func own(_ name: String, handles: LoopOwned<Handles>, loop: GLibLoopThread) async throws -> Bool {
        try await withCheckedThrowingContinuation { (result: CheckedContinuation<Bool, Error>) in
            loop.invoke {
                guard let connection = handles.value.connection else {
                    result.resume(throwing: MPRISError.noSessionBus("connection closed"))
                    return
                }
                if handles.value.ownerID != 0 {
                    g_bus_unown_name(handles.value.ownerID)
                    handles.value.ownerID = 0
                }
                var answered = false
                handles.value.onName = { acquired in
                    // Later losses (bus gone) only matter to the first answer.
                    guard !answered else { return }
                    answered = true
                    result.resume(returning: acquired)
                }
                let box = Unmanaged.passUnretained(handles).toOpaque()
                handles.value.ownerID = g_bus_own_name_on_connection(
                    connection, name, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE,
                    MPRISTrampolines.nameAcquired, MPRISTrampolines.nameLost, box, nil)
            }
        }
    }

    private static func closeAll(_ handles: LoopOwned<Handles>, loop: GLibLoopThread) async {
        _ = try? await loop.run {
            var h = handles.value
            if let connection = h.connection {
                for id in h.registrations { g_dbus_connection_unregister_object(connection, id) }
                if h.ownerID != 0 { g_bus_unown_name(h.ownerID) }
                g_dbus_connection_close_sync(connection, nil, nil)
                g_object_unref(UnsafeMutableRawPointer(connection))
            }
            if let node = h.nodeInfo { g_dbus_node_info_unref(node) }
            h.vtable?.deallocate()
            h = Handles()
            handles.value = h
        }
        loop.quit()
    }

    static func takeMessage(_ error: inout UnsafeMutablePointer<GError>?) -> String? {
        guard let e = error else { return nil }
        defer { g_error_free(e); error = nil }
        return e.pointee.message.map { String(cString: $0) }
    }

    // MARK: Requests (called on the loop thread by the trampolines)

    fileprivate func handleMethod(interface: String, method: String, parameters: OpaquePointer?,
                                  invocation: OpaquePointer) {
        let command: RemoteCommand?
        switch (interface, method) {
        case (Self.rootInterface, "Raise"): command = .raise
        case (Self.rootInterface, "Quit"): command = .quit
        case (Self.playerInterface, "Play"): command = .play
        case (Self.playerInterface, "Pause"): command = .pause
        case (Self.playerInterface, "PlayPause"): command = .playPause
        case (Self.playerInterface, "Stop"): command = .stop
        case (Self.playerInterface, "Next"): command = .next
        case (Self.playerInterface, "Previous"): command = .previous
        case (Self.playerInterface, "Seek"):
            command = parameters.flatMap { GVariantBuilding.int64($0, 0) }.map { .seek(offsetMicroseconds: $0) }
        case (Self.playerInterface, "SetPosition"):
            if let parameters, let track = GVariantBuilding.string(parameters, 0),
               let position = GVariantBuilding.int64(parameters, 1) {
                command = .setPosition(trackID: track, microseconds: position)
            } else {
                command = nil
            }
        case (Self.playerInterface, "OpenUri"):
            g_dbus_method_invocation_return_dbus_error(invocation, "org.mpris.MediaPlayer2.Multiview.NotSupported",
                                                       "OpenUri is not supported: views are given on the command line")
            return
        default:
            command = nil
        }
        guard let command else {
            g_dbus_method_invocation_return_dbus_error(invocation, "org.freedesktop.DBus.Error.InvalidArgs",
                                                       "bad call \(interface).\(method)")
            return
        }
        continuation.yield(command)
        g_dbus_method_invocation_return_value(invocation, nil)
    }

    fileprivate func property(interface: String, name: String) -> OpaquePointer? {
        if interface == Self.rootInterface {
            switch name {
            case "CanQuit": return GVariantBuilding.make(.bool(true))
            case "CanRaise": return GVariantBuilding.make(.bool(false))
            case "HasTrackList": return GVariantBuilding.make(.bool(false))
            case "Identity": return GVariantBuilding.make(.string(identity))
            case "SupportedUriSchemes": return GVariantBuilding.make(.strings(["file", "http", "https"]))
            case "SupportedMimeTypes": return GVariantBuilding.make(.strings(["video/mp4", "video/webm", "video/x-matroska",
                                                                             "audio/ogg", "application/vnd.apple.mpegurl"]))
            default: return nil
            }
        }
        if name == "Position" {
            let reader = positionReader.withLock { $0 }
            let position = nowPlaying.track == nil ? nil : reader?()
            return GVariantBuilding.make(.int64(Int64((position?.nanoseconds ?? 0) / 1000)))
        }
        return nowPlaying.playerProperties[name].map(GVariantBuilding.make)
    }

    fileprivate func setProperty(interface: String, name: String, value: OpaquePointer) -> Bool {
        guard interface == Self.playerInterface else { return false }
        switch name {
        case "Rate":
            guard let rate = GVariantBuilding.double(value) else { return false }
            continuation.yield(.rate(rate))
            return true
        case "Volume":
            guard let volume = GVariantBuilding.double(value) else { return false }
            continuation.yield(.volume(max(0, volume)))
            return true
        default:
            return false
        }
    }
}

/// A value touched only on the D-Bus loop thread.
final class LoopOwned<Value>: @unchecked Sendable {
    // @unchecked: read and written only inside `GLibLoopThread.invoke` blocks and GDBus callbacks, which all
    // run on that one thread, in order.
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// C trampolines for the GDBus vtable and name callbacks (no captures; the server travels as user data).
enum MPRISTrampolines {
    static let methodCall: GDBusInterfaceMethodCallFunc = { _, _, _, interface, method, parameters, invocation, data in
        guard let data, let interface, let method, let invocation else { return }
        let server = Unmanaged<MPRISServer>.fromOpaque(data).takeUnretainedValue()
        server.handleMethod(interface: String(cString: interface), method: String(cString: method),
                            parameters: parameters, invocation: invocation)
    }

    static let getProperty: GDBusInterfaceGetPropertyFunc = { _, _, _, interface, name, error, data in
        guard let data, let interface, let name else { return nil }
        let server = Unmanaged<MPRISServer>.fromOpaque(data).takeUnretainedValue()
        if let value = server.property(interface: String(cString: interface), name: String(cString: name)) {
            return value
        }
        g_set_error_literal(error, g_dbus_error_quark(), Int32(G_DBUS_ERROR_UNKNOWN_PROPERTY.rawValue),
                            "no property \(String(cString: name))")
        return nil
    }

    static let setProperty: GDBusInterfaceSetPropertyFunc = { _, _, _, interface, name, value, error, data in
        guard let data, let interface, let name, let value else { return 0 }
        let server = Unmanaged<MPRISServer>.fromOpaque(data).takeUnretainedValue()
        if server.setProperty(interface: String(cString: interface), name: String(cString: name), value: value) {
            return 1
        }
        g_set_error_literal(error, g_dbus_error_quark(), Int32(G_DBUS_ERROR_PROPERTY_READ_ONLY.rawValue),
                            "cannot set \(String(cString: name))")
        return 0
    }

    static let nameAcquired: GBusNameAcquiredCallback = { _, _, data in
        guard let data else { return }
        Unmanaged<LoopOwned<MPRISServer.Handles>>.fromOpaque(data).takeUnretainedValue().value.onName?(true)
    }

    static let nameLost: GBusNameLostCallback = { _, _, data in
        guard let data else { return }
        Unmanaged<LoopOwned<MPRISServer.Handles>>.fromOpaque(data).takeUnretainedValue().value.onName?(false)
    }
}
