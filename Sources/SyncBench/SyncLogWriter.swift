import Foundation
import GStreamer
import SyncAnalysis
import Synchronization

/// Streams a `SyncRecorder`'s frames into `DIR/render-times.log` (`SyncLog`'s text format) while a long run plays
/// (`play --sync-log DIR`): records are queued by the streaming threads and written once a second, with a
/// `T` line pairing the shared clock with the wall clock each time, so memory stays flat however long it runs.
///
/// Threading: the queue of records is a `Mutex` (streaming threads append; the writer takes it whole). The file
/// and the items last written per view are owned by the serial `queue`, where every write happens — never on
/// Swift's cooperative pool.
public final class SyncLogWriter: FrameRecordOutput, Sendable {
    private struct FileState {
        var handle: FileHandle?
        var lastItems: [Int: String] = [:]
        var failure: String?
    }
    private let pending = Mutex<[FrameRecord]>([])
    private let file = Mutex(FileState())
    private let closed = Mutex(false)
    private let queue = DispatchQueue(label: "multiview-sync-log")
    private let clock: Clock
    public let path: String
    private let interval: Double

    /// Creates `directory` (if needed) and `render-times.log` in it (replacing one left by an earlier run), and
    /// starts writing every `interval` seconds.
    public init(directory: String, clock: Clock, interval: Double = 1) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent(SyncLog.fileName)
        guard FileManager.default.createFile(atPath: path, contents: Data((SyncLog.header + "\n").utf8)),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        try handle.seekToEnd()
        self.clock = clock
        self.interval = interval
        file.withLock { $0.handle = handle }
        queue.async { self.writePending() }   // the first T line at once: windows can be mapped from the start
        scheduleNext()
    }

    public func record(_ frame: FrameRecord) { pending.withLock { $0.append(frame) } }

    /// Writes what is queued, then stops writing and closes the file (waits for the write). Idempotent.
    public func close() {
        guard !closed.withLock({ let was = $0; $0 = true; return was }) else { return }
        queue.sync {
            writePending()
            file.withLock { state in
                try? state.handle?.close()
                state.handle = nil
            }
        }
    }

    /// Why writing stopped (a full disk…), nil while it works.
    public var failure: String? { file.withLock { $0.failure } }

    private func scheduleNext() {
        queue.asyncAfter(deadline: .now() + interval) { [weak self] in
            guard let self, !self.closed.withLock({ $0 }) else { return }
            self.writePending()
            self.scheduleNext()
        }
    }

    /// On `queue`: the queued records and one clock pair, appended to the file.
    private func writePending() {
        let frames = pending.withLock { queued -> [FrameRecord] in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
        let pair = SyncLog.ClockPair(clockNs: clock.time.nanoseconds, unixNs: Self.unixNanoseconds())
        file.withLock { state in
            guard let handle = state.handle, state.failure == nil else { return }
            let text = SyncLog.lines(for: frames, lastItems: &state.lastItems) + SyncLog.line(for: pair)
            do {
                try handle.write(contentsOf: Data(text.utf8))
            } catch {
                state.failure = "\(path): \(error)"
            }
        }
    }

    static func unixNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
