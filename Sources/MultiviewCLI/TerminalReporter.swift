import Foundation
import Multiview
import Synchronization

/// The CLI's one reporter: the status on stdout; notes (`note: …`) and error lines (`error: …`) on stderr; one
/// line each, written at once (scripts read them live). The status is one line per report when stdout is piped
/// (`StageStatus.compactLine`), and a block of one line per view redrawn in place on a terminal (`StatusBlock`).
/// A view's failure is one error line when it happens (the status only says FAILED or RETRYING); the failed views
/// are kept, so the per-failed-view lines can be printed again when the run ends — or when a shutdown runs out of
/// time before it does (`ShutdownWatchdog`).
///
/// Owner: the `Mutex` (called from the stage's actor, its command tasks, the stdin, signal and watchdog threads);
/// every write happens under it, so a note never lands inside the status block.
final class TerminalReporter: StageReporter {
    private struct State {
        var failures: [Int: PlayerError] = [:]
        var finalLinesPrinted = false
        var block = StatusBlock()
    }
    private let state = Mutex(State())
    /// Ends the process if the shutdown takes longer than it may.
    let watchdog = ShutdownWatchdog()
    private let terminal = TerminalKind.current

    func status(_ line: String) { write(line, to: .standardOutput) }
    func statusReport(_ report: StageStatus) {
        state.withLock { s in
            if terminal.stdoutIsTerminal {
                FileHandle.standardOutput.write(Data(s.block.redraw(report, size: TerminalKind.size()).utf8))
            } else if terminal.fullStatusLine {
                FileHandle.standardOutput.write(Data((report.line + "\n").utf8))
            } else {
                FileHandle.standardOutput.write(Data((report.compactLine(width: terminal.pipedWidth) + "\n").utf8))
            }
        }
    }
    /// A command line was read from a terminal on stdin: the terminal echoed it under the status block.
    func stdinLineRead() {
        guard terminal.stdoutIsTerminal, terminal.stdinIsTerminal else { return }
        state.withLock { $0.block.lineEchoed() }
    }
    func note(_ line: String) { write("note: \(line)", to: .standardError) }
    func error(_ line: String) { write("error: \(line)", to: .standardError) }
    /// A line on stderr as it is (a failed view's `view 3 (x.mp4): file not found: …`, `info`'s per-file problems).
    func line(_ line: String) { write(line, to: .standardError) }

    func viewFailed(_ failure: PlayerError) {
        let new = state.withLock { $0.failures.updateValue(failure, forKey: failure.view.number) == nil }
        // Once, when it happens: the status line only says FAILED / RETRYING.
        if new { error(failure.description) }
    }
    func viewRecovered(_ view: ViewIdentity) { _ = state.withLock { $0.failures.removeValue(forKey: view.number) } }

    /// The stage stops now: from here the process has `ShutdownWatchdog.limit` to end.
    func stageEnding(_ reason: StageEndReason) { quitRequested() }

    /// The stage ends, or `--duration` is over (then the countdown starts even if the stage never handled its
    /// deadline).
    func quitRequested() {
        watchdog.arm(exitCode: 1, phase: "stopping the views", finalLines: { [self] in printFinalLines(nil) })
    }

    /// Calls `quitRequested` `seconds` from now, on a thread of its own (`--duration`).
    func quitRequested(after seconds: Double) {
        let thread = Thread { [self] in
            Thread.sleep(forTimeInterval: seconds)
            quitRequested()
        }
        thread.name = "multiview-duration"
        thread.start()
    }

    /// One line per failed view (`view 3 (broken.mp4): corrupt or unreadable media: …`) and per view that never
    /// started, printed once: from the outcome when the run ended, else from the failures seen so far.
    func printFinalLines(_ outcome: StageOutcome?) {
        let lines: [String]? = state.withLock { s in
            guard !s.finalLinesPrinted else { return nil }
            s.finalLinesPrinted = true
            guard let outcome else { return s.failures.keys.sorted().compactMap { s.failures[$0]?.description } }
            var lines = outcome.failures.map(\.description)
            for view in outcome.views where !outcome.played.contains(view.number)
                && !outcome.failures.contains(where: { $0.view == view }) {
                lines.append("\(view): never started playing")
            }
            return lines
        }
        for text in lines ?? [] { line(text) }
    }

    /// Ends the process now with `code`, leaving the pipelines to the kernel (see `StageTeardown.leaveToProcessExit`):
    /// no exit handlers run while streaming threads still work. Nothing to flush: every line of `play` is written
    /// unbuffered (and `fflush(NULL)` would wait for stdin's lock, held by the stdin thread blocked in `readLine`).
    func exitNow(_ code: Int32) -> Never {
        _exit(code)
    }

    /// One line on `handle`. On a terminal where the status block is drawn, the block is lifted, the line written
    /// above it and the block drawn again below.
    private func write(_ line: String, to handle: FileHandle) {
        state.withLock { s in
            let text = line + "\n"
            if terminal.stdoutIsTerminal && (handle === FileHandle.standardOutput || terminal.stderrIsTerminal),
               s.block.isDrawn {
                FileHandle.standardOutput.write(Data(s.block.erase().utf8))
                handle.write(Data(text.utf8))
                FileHandle.standardOutput.write(Data(s.block.drawAgain().utf8))
            } else {
                handle.write(Data(text.utf8))
            }
        }
    }
}

/// Guarantees the process ends within `limit` once the stage starts ending, whatever a pipeline, PulseAudio or
/// D-Bus is doing: a thread of its own (not Swift's cooperative pool, which blocked calls may have filled) waits
/// out the limit and then names what was still running in one line, prints the per-failed-view lines and exits.
///
/// Owner: the `Mutex` (armed from the stage's ending or a signal, phases from the CLI's shutdown steps).
final class ShutdownWatchdog: Sendable {
    /// The promise: `q`, `--duration`, SIGINT and SIGTERM end the process within 2 s.
    static let limit: Duration = .milliseconds(1900)

    private struct State {
        var armed = false
        var exitCode: Int32 = 1
        var phase = ""
    }
    private let state = Mutex(State())

    /// Starts the countdown (once; a later call only raises the exit code to a signal's).
    func arm(exitCode: Int32, phase: String, finalLines: @escaping @Sendable () -> Void) {
        let first = state.withLock { s -> Bool in
            if exitCode > 1 { s.exitCode = exitCode }
            guard !s.armed else { return false }
            s.armed = true
            if exitCode <= 1 { s.exitCode = exitCode }
            s.phase = phase
            return true
        }
        guard first else { return }
        let thread = Thread { [self] in
            Thread.sleep(forTimeInterval: Double(ShutdownWatchdog.limit.components.attoseconds) / 1e18
                         + Double(ShutdownWatchdog.limit.components.seconds))
            let (code, phase) = state.withLock { ($0.exitCode, $0.phase) }
            FileHandle.standardError.write(Data("error: shutdown did not finish within \(ShutdownWatchdog.limit) (still \(phase)); exiting\n".utf8))
            finalLines()
            _exit(code)   // no flush: see TerminalReporter.exitNow
        }
        thread.name = "multiview-watchdog"
        thread.start()
    }

    /// What the shutdown is doing now (named if it does not finish).
    func phase(_ text: String) { state.withLock { $0.phase = text } }
}
