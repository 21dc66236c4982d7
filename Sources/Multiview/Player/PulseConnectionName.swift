import Synchronization

/// The client name every view's pulsesink connects to PulseAudio with, and its retirement when that connection dies.
///
/// Why a name can go bad: pulsesink keeps one PulseAudio connection per client name in a process, shared by every
/// sink of that name and closed only when the last of them closes. When the daemon dies, a sink that writes nothing
/// (a paused view) is not told and keeps the dead connection open; a view that noticed the loss and brings a new
/// stream up once the daemon is back would get that dead connection again, and its new sink failed to reach
/// PAUSED: the view FAILED (`PausedViewServerLossTests`). So the view that sees a loss retires the name its lost sink
/// used, and new sinks take the next one ("Multiview", then "Multiview (2)", …): a fresh connection to the new daemon,
/// whatever old sinks still hold. Views that see the same loss retire the same name once.
///
/// Shared by every player of the process (each calls it from its own actor): the counter is behind a mutex.
public enum PulseConnectionName {
    private static let generation = Mutex(1)
    private static let base = "Multiview"

    /// The name new sinks connect with.
    public static var current: String { name(generation.withLock { $0 }) }

    /// `name` (a lost sink's client name) is dead: new sinks take the next one, unless it was already retired.
    public static func retire(_ name: String) {
        generation.withLock { current in
            if name == Self.name(current) { current += 1 }
        }
    }

    private static func name(_ generation: Int) -> String { generation == 1 ? base : "\(base) (\(generation))" }
}
