import GStreamer

/// The audio output supervisor's bookkeeping of sink replacements and stream losses, with no I/O: which
/// replacement owns the pipeline, what a run of replacements restores, and whether a refused state change was the
/// lost stream's doing. The `Player` actor owns the one instance (in `AudioOutputState`) and does the I/O;
/// `AudioSinkReplacementsTests` drive it directly.
///
/// Why (issue 15, the soak's PulseAudio kill): when the daemon came back, a view's new stream often failed at once
/// (the daemon still setting up its sinks), and that second loss cancelled the replacement in flight, which then
/// failed the view ("cannot replace the audio output: CancellationError()", FAILED for the rest of the run). A
/// replacement overtaken by a newer one is not the view's failure: it stops, and the newer one finishes the job
/// from where the view was when the first began (not from a half-built pipeline's position or its PAUSED). And
/// views failed with "cannot change state to PAUSED": a command's PAUSED (a coordinated preparation, a pause) on
/// a pipeline whose pulsesink's stream had died was refused — the sink's preroll fails on the dead stream — and the
/// refusal failed the view, although the supervisor replaces that sink.
struct AudioSinkReplacements: Sendable, Equatable {
    /// One replacement: where the view goes on and whether it plays, fixed when the first of a run began.
    struct Job: Sendable, Equatable {
        let generation: Int
        let position: ClockTime
        var resume: Bool
    }

    /// The replacement in flight (nil when none).
    private(set) var current: Job?
    private var generation = 0
    /// Stream losses noted so far.
    private(set) var losses = 0
    /// The pipeline's pulsesink has lost its stream and has not been replaced yet.
    private(set) var deadSinkInPipeline = false

    /// Begins a replacement that supersedes the one in flight, if any; a run of replacements keeps the position
    /// and intent of its first.
    mutating func begin(position: ClockTime, resume: Bool) -> Job {
        generation += 1
        let job = Job(generation: generation, position: current?.position ?? position, resume: current?.resume ?? resume)
        current = job
        return job
    }

    /// The user played or paused the view while a replacement is in flight: the replacement ends that way, not as
    /// the view was when it began (it pauses the pipeline itself, so the player's target cannot tell).
    mutating func userWants(playing: Bool) { current?.resume = playing }

    /// Whether the view plays once the replacement in flight ends (`fallback`: none in flight).
    func resumes(orElse fallback: Bool) -> Bool { current?.resume ?? fallback }

    /// Whether `job` still owns the pipeline (no newer replacement began).
    func owns(_ job: Job) -> Bool { current?.generation == job.generation }

    /// `job` ended (done or failed); true when it still owned the pipeline, i.e. its outcome is the view's.
    mutating func end(_ job: Job) -> Bool {
        guard owns(job) else { return false }
        current = nil
        return true
    }

    /// The pipeline's PulseAudio stream was lost (its sink's error).
    mutating func noteLoss() {
        losses += 1
        deadSinkInPipeline = true
    }

    /// The lost sink left the pipeline (a replacement put another in).
    mutating func sinkReplaced() { deadSinkInPipeline = false }

    /// Whether a pipeline error is the PulseAudio stream's loss (the view goes on without sound and the sink is
    /// replaced) rather than the view's failure: an error of a pulsesink. Not playsink's "Failed to configure the
    /// audio sink" (a new pulsesink whose device has no sink yet): counted as a loss, the pipeline was rebuilt after
    /// it and GStreamer 1.22's playbin3 aborted the process (`reconfigure_output: assertion failed`, 2 of 2 soak
    /// runs); failing that one view is the lesser harm, and the supervisor's return probe
    /// (`AudioOutput.pulseAudioTakesStreams(device:)`) keeps it from happening.
    static func isStreamLoss(_ error: BusMessage.ErrorInfo) -> Bool {
        error.source.factory == "pulsesink"
    }

    /// Whether a state change refused since `losses` was read is the lost stream's doing: the pipeline's sink had
    /// lost its stream, or a loss was noted after the refusal.
    func explainsRefusal(since losses: Int) -> Bool { deadSinkInPipeline || self.losses != losses }
}
