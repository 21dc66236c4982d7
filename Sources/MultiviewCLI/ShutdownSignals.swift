import Foundation
import Synchronization

/// The write end of the pipe the signal handler writes to. Set once, before the handler is installed, and never
/// changed: the handler only reads it (a plain global: a signal handler may not take locks or run lazy
/// initialisers).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// SIGINT and SIGTERM for `play`: the first one ends the stage like `q` (the per-failed-view lines are printed,
/// the process ends within 2 s, exit status 130 / 143); a second one ends the process at once.
///
/// The handler only writes the signal's number into a pipe (async-signal-safe); a thread of its own reads it and
/// acts. That thread unblocks both signals for itself: children of some parents (the test runner) start with them
/// blocked, and the kernel then delivers them to this thread.
enum ShutdownSignals {
    /// Installs the handler; `quit` is called on the first signal (from the signal thread).
    static func install(reporter: TerminalReporter, quit: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            reporter.error("cannot watch SIGINT/SIGTERM (pipe: \(String(cString: strerror(errno)))); they end the process at once")
            return
        }
        signalPipeWriteEnd = fds[1]
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { signal in
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = write(signalPipeWriteEnd, &byte, 1)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)

        let readEnd = fds[0]
        let thread = Thread {
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGINT)
            sigaddset(&set, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            var received = 0
            while true {
                var byte: UInt8 = 0
                let n = read(readEnd, &byte, 1)
                if n < 0 && errno == EINTR { continue }
                guard n == 1 else { return }
                received += 1
                let signal = Int32(byte)
                let code = 128 + signal
                if received == 1 {
                    ShutdownSignals.received.withLock { if $0 == nil { $0 = code } }
                    reporter.note("\(signal == SIGINT ? "SIGINT" : "SIGTERM"): stopping (send it again to end at once)")
                    reporter.watchdog.arm(exitCode: code, phase: "stopping the views",
                                          finalLines: { reporter.printFinalLines(nil) })
                    quit()
                } else {
                    reporter.printFinalLines(nil)
                    reporter.exitNow(code)
                }
            }
        }
        thread.name = "multiview-signals"
        thread.start()
    }

    /// The exit status a signal asked for (128 + its number), nil when none came.
    static var requestedExitCode: Int32? { received.withLock { $0 } }
    static let received = Mutex<Int32?>(nil)
}
