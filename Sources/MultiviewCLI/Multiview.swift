import ArgumentParser
import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import SyncBench
import TrickPlay

@main
struct MultiviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multiview",
        abstract: "Synchronized multiview audio/video player for Linux (GStreamer + PulseAudio).",
        subcommands: [Play.self, Info.self, SyncReport.self, Routes.self, PreviewCommand.self, TrickPlayCommand.self,
                      Host.self, Join.self, SyncLogSkew.self],
        defaultSubcommand: Play.self
    )
}

struct SyncReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-report",
        abstract: "Measure sync: coordinated views headless through a script, per-frame render times, skew per phase.",
        discussion: """
        Script lines: play, pause, resume, seek +10, seek -5, rate 2.0, rate 1.0, late join, suspend N, stall N,
        wait S (# comments). Without --script a default script runs all of them.
        Writes DIR/summary.json (views, frames, p50_skew_ms, p99_skew_ms, max_skew_ms, phases), DIR/frames.json and
        DIR/skew.png; with --baseline also the same for uncoordinated views (…-baseline.*), compared in one table.
        """
    )

    @Option(name: .long, help: "Number of views (the bundled angles repeat when more than four).")
    var views: Int = 4

    @Option(name: .long, help: "Script file (one action per line).")
    var script: String?

    @Option(name: .long, help: "Output directory.")
    var out: String

    @Flag(name: .long, help: "Also run the same views uncoordinated (started one after another) for comparison.")
    var baseline = false

    @Option(name: .long, parsing: .upToNextOption, help: "Media to use (default: the four bundled angles).")
    var media: [String] = []

    func validate() throws {
        if views < 1 || views > 16 { throw ValidationError("--views must be 1…16") }
    }

    func run() async throws {
        guard GStreamer.ensureInitialized() else { throw ExitCode(2) }
        let reporter = TerminalReporter()
        let actions: [SyncScriptAction]
        if let script {
            let text: String
            do { text = try String(contentsOfFile: script, encoding: .utf8) } catch {
                reporter.line("cannot read script \(script): \(error)")
                throw ExitCode(2)
            }
            do { actions = try SyncScriptAction.parseScript(text) } catch {
                reporter.line("\(script): \(error)")
                throw ExitCode(2)
            }
        } else {
            actions = SyncScriptAction.defaultScript
        }
        let files = media.isEmpty
            ? ["angle1-wide.mp4", "angle2-left.webm", "angle3-right.mkv", "angle4-overhead.mp4"].map { "Media/\($0)" }
            : media
        for file in files where !file.contains("://") && !FileManager.default.fileExists(atPath: file) {
            reporter.line("\(file): file not found")
            throw ExitCode(2)
        }
        let directory = URL(fileURLWithPath: out)
        let log: @Sendable (String) -> Void = { reporter.line("sync-report: \($0)") }

        // The yardstick for "seek → all aligned": each file alone, seek while playing → first new frame.
        let single = try await SingleViewSeekProbe.measure(files: files)
        let slowest = single.values.max() ?? 0
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let singleJSON = try JSONSerialization.data(withJSONObject: ["seek_to_first_frame_ms": single,
                                                                     "slowest_ms": slowest], options: [.prettyPrinted, .sortedKeys])
        try singleJSON.write(to: directory.appendingPathComponent("single-view-seek.json"))

        var summaries: [SyncSummary] = []
        var failed = false
        log("coordinated run, \(views) views")
        let coordinatedRun = try await SyncReportRunner(files: files, coordinated: true, actions: actions, log: log).run(views: views)
        let coordinated = SyncAnalyzer.analyze(frames: coordinatedRun.frames, phases: coordinatedRun.phases, mode: "coordinated")
        summaries.append(coordinated.summary)
        failed = failed || !coordinatedRun.failures.isEmpty
        var comparison: (result: SyncAnalysisResult, phases: [PhaseRecord])?
        if baseline {
            log("baseline run (uncoordinated), \(views) views")
            // The same seek targets as the coordinated run: both then decode the same frames per seek.
            let targets = Dictionary(coordinatedRun.phases.compactMap { p in p.seekTargetNs.map { (p.index, $0) } },
                                     uniquingKeysWith: { a, _ in a })
            let baselineRun = try await SyncReportRunner(files: files, coordinated: false, actions: actions,
                                                         seekTargets: targets, log: log).run(views: views)
            let base = SyncAnalyzer.analyze(frames: baselineRun.frames, phases: baselineRun.phases, mode: "baseline")
            summaries.append(base.summary)
            try await SyncReportFiles.write(result: base, frames: baselineRun.frames, phases: baselineRun.phases,
                                            to: directory, fileStem: "baseline")
            comparison = (base, baselineRun.phases)
            failed = failed || !baselineRun.failures.isEmpty
            for failure in baselineRun.failures { reporter.line("sync-report: baseline run failed in \(failure)") }
        }
        try await SyncReportFiles.write(result: coordinated, frames: coordinatedRun.frames,
                                        phases: coordinatedRun.phases, to: directory, comparison: comparison)
        print(SummaryTable.render(summaries))
        print(String(format: "single view alone, seek → first frame: slowest %.1f ms (%@)", slowest,
                     single.sorted { $0.key < $1.key }.map { String(format: "%@ %.1f", $0.key, $0.value) }.joined(separator: ", ")))
        let records = Dictionary(coordinatedRun.phases.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        let baselinePhases = Dictionary((comparison?.result.summary.phases ?? []).map { ($0.index, $0) },
                                        uniquingKeysWith: { a, _ in a })
        for phase in coordinated.summary.phases where phase.name.hasPrefix("seek") {
            guard let aligned = phase.timeToAlignedMs, slowest > 0 else { continue }
            var line = String(format: "%@: all %d views aligned %.1f ms after the command = %.2f × the slowest single view alone",
                              phase.name, phase.views, aligned, aligned / slowest)
            // The same seek in the baseline run: independent players sent to the same target at once; its
            // slowest view's own seek → first frame.
            if let own = baselinePhases[phase.index]?.slowestFirstFrameMs, own > 0 {
                line += String(format: "; %.2f × the slowest uncoordinated view's own seek → first frame in the baseline run, same target (%.1f ms)",
                               aligned / own, own)
            }
            // The same yardstick measured inside the group run: each view's own seek+preroll under the group's load.
            if let prepare = records[phase.index]?.slowestPrepareMs, let margin = records[phase.index]?.startMarginMs, prepare > 0 {
                line += String(format: "; slowest view's own seek+preroll in the group %.1f ms + start margin %.1f ms (%.2f ×)",
                               prepare, margin, aligned / prepare)
                if let lead = records[phase.index]?.startLeadMs {
                    line += String(format: ", every view started %.2f ms before the instant", lead)
                }
                if let fanout = records[phase.index]?.startFanoutMs { line += String(format: ", start fan-out %.1f ms", fanout) }
                if let missed = records[phase.index]?.missedStart, missed > 0 { line += ", \(missed) view(s) missed the instant and caught up" }
            }
            print(line)
        }
        print("wrote \(directory.path)/summary.json, frames.json, skew.png" + (baseline ? " (+ -baseline)" : ""))
        for failure in coordinatedRun.failures { reporter.line("sync-report: coordinated run failed in \(failure)") }
        if failed { throw ExitCode(1) }
    }
}
