import Foundation
import Synchronization

/// Which PulseAudio daemon answers now, told apart from the one a view's pulsesink connected to, without libpulse.
///
/// Why (issue 15; the hang in `CoordinatedKillCommandTests`, backtrace in the session 13/14 notes): a pulsesink
/// whose daemon died, if it is brought to PLAYING on a shared clock, deadlocks inside GStreamer 1.22. Its first
/// buffer in PLAYING runs `gst_audio_base_sink_sync_latency`, which starts the ring buffer while it holds the
/// sink's object lock. pulsesink then un-corks the stream, which fails on the dead stream, and it posts the error
/// there. Posting reads the sink's path, which takes the same object lock: the streaming thread waits on itself,
/// holding PulseAudio's mainloop lock. Every pulsesink of the process then hangs, and so does the view's actor at
/// its next look into the bin. A paused view is not told that its stream died (it writes nothing), so a play
/// command after a kill, or after a kill and a restart, reached exactly that.
///
/// So before a view with a PulseAudio stream plays, the player checks that the daemon its sink connected to is
/// still the one that answers (`Player.pulseStreamIsCurrent`). If it is not, the player treats the stream as
/// lost (a fake sink, then a new stream) instead of playing it. The window left is a daemon that dies between
/// the check and the sink's first buffer in PLAYING: usually milliseconds, against the seconds a kill-and-restart
/// leaves, but on two loaded cores it can be long enough for a test that kills the daemon as soon as the stream
/// appears (at preroll) to land in it (`AudioServerLossTests` hung so once in ~25 runs; it now kills a view that
/// plays).
///
/// A daemon is known by its native socket: the address libpulse would use (`PULSE_SERVER`'s first local entry,
/// else the runtime directory's `native`) and the socket file, which a restarted daemon creates anew. A killed
/// daemon leaves the file behind, so "answers" is a `connect` on it. The file's inode number alone does not tell
/// a restart (the new file often gets the freed number back): its change time does. An address that is not a
/// local socket (TCP, none found) is `.unknown`, and the check then lets the view play as before.
public struct PulseServerInstance: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
    /// When the socket file was made, in ns (a restarted daemon may get the freed inode number back).
    let created: Int64

    /// What `probe()` found.
    public enum Presence: Sendable, Equatable {
        /// No local socket address to check (a TCP server, or no runtime directory).
        case unknown
        /// The socket is there but nobody accepts on it (the daemon died), or it is gone.
        case unreachable
        /// A daemon accepts on the socket; `instance` tells it from a later one on the same path.
        case running(PulseServerInstance)
    }

    /// The daemon that answers now. Costs a `stat` and a local `connect` (well under a millisecond); the
    /// connection is closed at once, which the daemon logs at debug level only.
    public static func probe(environment: [String: String] = ProcessInfo.processInfo.environment) -> Presence {
        guard let path = socketPath(environment: environment) else { return .unknown }
        var info = stat()
        guard stat(path, &info) == 0 else { return .unreachable }
        let instance = PulseServerInstance(device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                                           created: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
        return accepts(path) ? .running(instance) : .unreachable
    }

    /// The native socket libpulse would connect to, or nil when that is not a local socket we can name.
    static func socketPath(environment: [String: String]) -> String? {
        if let servers = environment["PULSE_SERVER"], !servers.isEmpty {
            // A list, tried in order: the first entry decides (libpulse goes on to the next only when it fails).
            guard var first = servers.split(whereSeparator: { $0 == " " }).first.map(String.init) else { return nil }
            if first.hasPrefix("{"), let close = first.firstIndex(of: "}") { first = String(first[first.index(after: close)...]) }
            if first.hasPrefix("unix:") { return String(first.dropFirst("unix:".count)) }
            return first.hasPrefix("/") ? first : nil
        }
        var candidates: [String] = []
        if let runtime = environment["PULSE_RUNTIME_PATH"] { candidates.append(runtime + "/native") }
        if let xdg = environment["XDG_RUNTIME_DIR"] { candidates.append(xdg + "/pulse/native") }
        candidates.append("/run/user/\(getuid())/pulse/native")
        candidates.append("/var/run/pulse/native")
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    private static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) == 0 }
        }
    }
}

/// The client name a view's pulsesink connects with: "Multiview" for the first daemon the process met, then
/// "Multiview (2)", … for each later one.
///
/// Why not always "Multiview": pulsesink shares one connection per client name in a process, kept while any sink
/// of that name is open. After a daemon restart, a sink that never noticed the loss (a paused view) keeps the
/// dead connection open, and a new sink of the same name got that dead connection and could not reach PAUSED (the
/// view FAILED: `PausedViewServerLossTests`). A name per daemon gives every new sink a connection to the daemon
/// that answers now, whatever old sinks still hold.
///
/// Shared by every player of the process (each asks from its own actor): the table is behind a mutex.
public enum PulseConnectionName {
    private static let seen = Mutex<[PulseServerInstance]>([])
    static let base = "Multiview"

    /// The name for a sink connecting while `presence` answers.
    public static func name(for presence: PulseServerInstance.Presence) -> String {
        guard case .running(let instance) = presence else { return base }
        let index = seen.withLock { seen in
            if let index = seen.firstIndex(of: instance) { return index }
            seen.append(instance)
            return seen.count - 1
        }
        return index == 0 ? base : "\(base) (\(index + 1))"
    }
}

