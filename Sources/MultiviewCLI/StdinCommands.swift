import Foundation
import Multiview

/// Reads commands from stdin on a thread of its own (readLine blocks); ends at EOF. A line that is no command, or a
/// number out of range, is one error line naming it and what is allowed.
enum StdinCommands {
    static func stream(reporter: TerminalReporter) -> AsyncStream<StageCommand> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() {
                    reporter.stdinLineRead()
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.isEmpty { continue }
                    switch StageCommand.read(trimmed) {
                    case .success(.quit):
                        // The 2 s promise starts when `q` is read, not when the stage gets to it: a view whose
                        // pipeline is wedged (GStreamer 1.22's pulsesink can deadlock after PulseAudio dies, see
                        // `AudioClockGuard`) can block the stage, and then `q` would never end the process.
                        reporter.quitRequested()
                        continuation.yield(.quit)
                    case .success(let command): continuation.yield(command)
                    case .failure(let error): reporter.error(StageCommand.printable("\(error)"))
                    }
                }
                continuation.finish()
            }
            thread.name = "multiview-stdin"
            thread.start()
        }
    }
}
