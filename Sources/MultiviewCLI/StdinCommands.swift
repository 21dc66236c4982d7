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
