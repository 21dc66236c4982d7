import Foundation
import GStreamer
import Multiview
import SyncBench

/// `play --sync-log DIR`: every frame each view renders (its render time on the shared clock, media time, rate),
/// recorded by the `SyncRecorder` that `sync-report` uses and streamed to `DIR/render-times.log` while playing
/// (`SyncLogWriter`; `multiview sync-log-skew DIR` turns it into skew figures). Headless only: the recorder
/// listens to the fake video sinks' handoffs, which fire after the sink's clock wait, at the frame's presentation.
///
/// Threading: immutable references; the recorder and the writer own their state.
struct PlaySyncLog: Sendable {
    let recorder: SyncRecorder
    let writer: SyncLogWriter
    /// Coordinated views share their item identifier (they are compared); otherwise each view is its own item.
    let item: String?

    init(directory: String, coordinatedItem: String?) throws {
        let clock = Clock.systemClock()   // the clock every view runs on (coordinated or not, see ClockModel)
        writer = try SyncLogWriter(directory: directory, clock: clock)
        recorder = SyncRecorder(clock: clock, output: writer, followsSegments: true)
        item = coordinatedItem
    }

    /// Why `--sync-log` cannot run with these options, or nil.
    static func problem(syncLog: String?, headless: Bool) -> String? {
        guard let syncLog else { return nil }
        if syncLog.isEmpty { return "--sync-log: expected a directory" }
        return headless ? nil : "--sync-log \(syncLog): needs --headless (it records the fake video sinks' render times)"
    }

    /// Wraps the stage's player hook: each view (started or added) is recorded first. A view that cannot be
    /// recorded gets one line and plays on.
    func hook(_ inner: (@Sendable (Player) async -> Void)?, reporter: TerminalReporter) -> @Sendable (Player) async -> Void {
        { [recorder, item] player in
            do {
                try recorder.attach(player, item: item ?? "view \(player.view.number)")
            } catch {
                reporter.error("--sync-log: \(player.view): not recorded: \(error)")
            }
            await inner?(player)
        }
    }

    /// Writes what is left and closes the log; says so when writing failed on the way.
    func finish(reporter: TerminalReporter) {
        recorder.detachAll()
        writer.close()
        if let failure = writer.failure { reporter.error("--sync-log: writing stopped: \(failure)") }
    }
}
