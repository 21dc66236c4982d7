import ArgumentParser
import Multiview

/// The play options `play`, `host` and `join` share: how long to play and whether audio goes to PulseAudio.
/// (`--headless` stays with each command: its help says more for `play`, whose window is the usual case.)
struct PlayOptions: ParsableArguments {
    @Option(name: .long, help: "Stop after this many seconds (more than 0, at most 604800).")
    var duration: String?

    @Flag(name: .long, help: "Send audio to fake sinks even when PulseAudio is reachable.")
    var noAudio = false

    /// `--duration` as seconds, checked against `StageLimits` (nil when not given). Read as text so that an error
    /// line quotes it as typed (`1e309`, not `inf`).
    func checkedDuration() throws(StageInputError) -> Double? {
        guard let duration else { return nil }
        guard let seconds = Double(duration) else {
            throw .malformed(input: "--duration \(duration)", expected: "seconds, e.g. 5 or 2.5")
        }
        return try StageLimits.duration(seconds, input: "--duration \(duration)")
    }

    /// `--duration` as seconds, once `checkedDuration()` has accepted it.
    var durationSeconds: Double? { duration.flatMap { Double($0) } }

    /// The views' audio: fake sinks with `--no-audio`, else the stage's choice (PulseAudio when it answers).
    var audio: AudioOutput? { noAudio ? .fakeSink : nil }
}
