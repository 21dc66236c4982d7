import Foundation
import TestSupport

/// PulseAudio 16.1's module-raop-sink aborts its daemon when it loses a race with itself as it connects. The main
/// thread answers the RTSP SETUP (sockets made, a CONNECTED message posted to the sink's I/O thread), sends RECORD,
/// and on its reply marks the client as streaming. The I/O thread runs one pass of its loop after each wake-up
/// before it handles the message that woke it; if that pass comes after the RECORD reply, it sees a streamable
/// client but has no poll item yet (made only when CONNECTED is handled) and fails `pa_assert(pollfd)`
/// (raop-sink.c:570, "false positive" per its comment; still there upstream), SIGABRT. The window is the RECORD
/// round trip, about a millisecond on loopback: lost when the I/O thread, an ordinary (SCHED_OTHER, nice -11)
/// thread, is kept off the CPU longer than that by a loaded machine. `module-raop-sink` has no argument that avoids
/// it (by its code: `autoreconnect=yes` skips the assertion but dereferences the same missing poll item a few lines on;
/// the TCP transport posts CONNECTED the same way, and shairport-sync answers SETUP with UDP only).
///
/// What we can do from outside: put that one I/O thread on SCHED_RR (priority 1, below PulseAudio's own real-time
/// sink threads) before any stream reaches the sink, so that it preempts every ordinary task the moment it is woken.
enum RAOPConnectRace {
    /// Finds the RAOP sink's I/O thread in the daemon `pid` (named "raop-sink-…"; waits up to 2 s for it to appear)
    /// and makes it SCHED_RR. Throws when it is not there or the policy cannot be set (needs root or CAP_SYS_NICE,
    /// as PulseAudio's own real-time threads do).
    static func shieldIOThread(ofDaemon pid: pid_t) async throws {
        let deadline = ContinuousClock.now + .seconds(2)
        var threads: [pid_t] = []
        while threads.isEmpty {
            threads = raopThreads(of: pid)
            if !threads.isEmpty { break }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("no raop-sink I/O thread in PulseAudio's process \(pid) (threads: \(threadNames(of: pid)))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard threads.count == 1 else { throw TestFailure("\(threads.count) raop-sink threads in \(pid), expected one") }
        var parameters = sched_param(sched_priority: 1)
        guard sched_setscheduler(threads[0], SCHED_RR, &parameters) == 0 else {
            let reason = String(cString: strerror(errno))
            throw TestFailure("cannot put the raop-sink I/O thread \(threads[0]) on SCHED_RR: \(reason) (needs root or CAP_SYS_NICE)")
        }
    }

    private static func threadNames(of pid: pid_t) -> [pid_t: String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var names: [pid_t: String] = [:]
        for task in tasks {
            guard let tid = pid_t(task),
                  let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8) else { continue }
            names[tid] = name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return names
    }

    private static func raopThreads(of pid: pid_t) -> [pid_t] {
        threadNames(of: pid).filter { $0.value.hasPrefix("raop-sink") }.map(\.key)
    }
}
