import Foundation
import GStreamer

/// How a stage runs.
public struct StageConfiguration: Sendable {
    public var sources: [MediaSource]
    /// Force headless. Without it the stage opens a window when a display is reachable.
    public var headless: Bool
    /// Stop after this many seconds of wall time (nil: play to the end).
    public var duration: Double?
    /// nil: PulseAudio when a server answers, else a fake sink.
    public var audio: AudioOutput?
    /// Tile size in the window (`--tile WxH`), unless `fitsScreen`.
    public var tileWidth: Int
    public var tileHeight: Int
    /// Tiles as big as the screen allows for the number of views (the CLI's default when `--tile` is not given);
    /// `tileWidth`/`tileHeight` are then unused. Either way the tiles follow the window when it is resized.
    public var fitsScreen = false
    /// Print one status line per interval.
    public var statusInterval: Duration
    /// Coordinated views (one clock, group transport): the coordination layer plugs in here.
    public var coordination: (any StageCoordination)?
    /// Spare tiles kept free in the window for views added while running (`add URI`).
    public var spareTiles: Int = 0
    /// Follows every view (the priority manager plugs in here): labels, extra commands, clearer failures.
    public var observer: (any StageViewObserver)?
    /// Audio routes and the external display: the routing layer plugs in here.
    public var routing: (any StageRouting)?
    /// Told about every view's player right after it is created (the remote control follows them).
    public var playerCreated: (@Sendable (Player) async -> Void)?
    /// I-frame trick play and scrub previews (`ff N`, `rew N`, `preview N T PATH`): the trick-play layer plugs in here.
    public var trickPlay: (any StageTrickPlay)?
    /// What happens to the views when the run ends (the CLI leaves them to the process's exit).
    public var teardown: StageTeardown = .stopViews
    /// `--loop`: a view that reaches its end starts again from the beginning; coordinated, the group does, together,
    /// once every view has ended (one group seek to 0). The run then ends only by `q`, `--duration` or failures.
    public var loop = false
    /// Where the views' PulseAudio playout is read from (`PlayerConfiguration.audioPlayoutTiming`).
    public var audioPlayoutTiming: AudioPlayoutTiming = .server

    public init(sources: [MediaSource], headless: Bool = false, duration: Double? = nil, audio: AudioOutput? = nil,
                tileWidth: Int = 480, tileHeight: Int = 270, statusInterval: Duration = .seconds(1)) {
        self.sources = sources; self.headless = headless; self.duration = duration; self.audio = audio
        self.tileWidth = tileWidth; self.tileHeight = tileHeight; self.statusInterval = statusInterval
    }
}

/// How a stage run ended.
public struct StageOutcome: Sendable {
    public var views: [ViewIdentity]
    /// One per failed view.
    public var failures: [PlayerError]
    /// Views that reached PLAYING.
    public var played: Set<Int>
    public var usedWindow: Bool
    public var audio: AudioOutput
    /// 0 when every view played and none failed.
    public var exitCode: Int32 { failures.isEmpty && played.count == views.count ? 0 : 1 }
}

/// Why a stage run ends.
public enum StageEndReason: Sendable, Equatable {
    /// `q`, the window's q/Esc, MPRIS Quit, or a signal turned into `quit` by the front end.
    case quit
    /// `--duration` elapsed.
    case deadline
    /// Every view ended or failed.
    case allViewsDone
    /// The configuration could not run (the reason was reported).
    case invalidConfiguration
}

/// The one place a stage's user-facing output goes (stdout/stderr in the CLI, a recorder in tests): status lines,
/// notes, error lines, and the facts a front end needs to end well (which views failed, that the stage is ending).
/// Called from any task or thread: implementations guard their own state.
public protocol StageReporter: Sendable {
    /// One status line ("[  3.0s] 1 angle1-wide.mp4 PLAYING 0:00:03.012/0:00:24.000 | …").
    func status(_ line: String)
    /// The stage's status as a value (the CLI prints it in the form its output suits); default: `status(line)`.
    func statusReport(_ report: StageStatus)
    /// Something worth knowing that is not an error ("audio output back on PulseAudio").
    func note(_ line: String)
    /// A command or number the stage refused, or a view that could not be stopped: the one line saying why.
    func error(_ line: String)
    /// View `failure.view` failed (it may still recover: `viewRecovered`). A front end prints these lines when the
    /// run ends — or when a shutdown runs out of time before it does.
    func viewFailed(_ failure: PlayerError)
    /// A failed view plays again.
    func viewRecovered(_ view: ViewIdentity)
    /// The stage stops taking input and tears its views down now (it takes at most `StageShutdown.deadline`).
    func stageEnding(_ reason: StageEndReason)
}

extension StageReporter {
    public func statusReport(_ report: StageStatus) { status(report.line) }
    public func error(_ line: String) { note(line) }
    public func viewFailed(_ failure: PlayerError) {}
    public func viewRecovered(_ view: ViewIdentity) {}
    public func stageEnding(_ reason: StageEndReason) {}
}

