import GStreamer

// The layers that plug into a stage, each defined here so the stage need not import them.

/// What the coordination layer provides to a stage (defined here so the stage need not import it).
public protocol StageCoordination: Sendable {
    /// Called for each view before its media is loaded: connect it to the group.
    func attach(_ player: Player, source: MediaSource) async throws
    /// Called once every initial view is loaded: start the group.
    func start(_ players: [Player]) async throws
    /// A view added while running joins the group in sync.
    func join(_ player: Player) async throws
    /// The view's coordination state for its tag and status line ("suspended: stallRecovery"), nil when plain.
    func label(for player: Player) async -> String?
    /// "What happened?" on one view: replay the last seconds at 2x and rejoin; the others never pause.
    func whatHappened(_ player: Player) async throws
}

/// Something that follows every view of a stage (defined here so the stage need not import it): it sees each
/// player before its media loads, adds a label to the view's tag and status line, handles the commands the stage
/// leaves to it (`priority N high`) and may explain a view's failure better than GStreamer did.
public protocol StageViewObserver: Sendable {
    /// Called before the view loads `source`; tile size nil when headless.
    func attach(_ player: Player, source: MediaSource, tileWidth: Int?, tileHeight: Int?) async
    /// Short label for the view's tag and status line ("high 1920x1080 5.5M"), nil for none.
    func label(forView number: Int) async -> String?
    /// Handles a command the stage does not; returns the note to print.
    func perform(_ command: StageCommand) async -> String
    /// The same failure, with a clearer cause when the observer knows one.
    func refine(_ failure: PlayerError) async -> PlayerError
    /// View `number`'s tile has a new size (the window was resized or went fullscreen).
    func tileResized(view number: Int, width: Int, height: Int) async
    /// Whether failed view N is being retried (reloaded once its server is back): RETRYING in the status.
    func isRetrying(view number: Int) async -> Bool
}

extension StageViewObserver {
    public func tileResized(view number: Int, width: Int, height: Int) async {}
    public func isRetrying(view number: Int) async -> Bool { false }
}

/// What the routing layer provides to a stage (defined here so the stage need not import it).
public protocol StageRouting: Sendable {
    /// The configuration a view's player gets (audio device, stream tags, external display branch).
    func configure(_ configuration: PlayerConfiguration) async -> PlayerConfiguration
    /// A view's player exists (before its media is loaded).
    func attach(_ player: Player) async
    /// A view ended or failed: preferences for it reset.
    func viewEnded(_ number: Int) async
    /// `audio N` / `a N`: the preferred view for non-mixable audio routes (nil: none).
    func preferAudio(_ number: Int?) async
    /// `external N` / `v N`: the preferred view for the external display (nil: none).
    func preferExternal(_ number: Int?) async
    /// Which routes the view owns, for its tag ("♪ living-room  ▶ TV"), nil when none.
    func label(for number: Int) async -> String?
}

/// What the trick-play layer provides to a stage (defined here so the stage need not import it).
public protocol StageTrickPlay: Sendable {
    /// Starts trick play at `rate` on the (paused) view from `position` seconds; says whether it started, with the
    /// note to print (refused: the stage resumes the view).
    func start(_ player: Player, source: MediaSource, rate: Double, from position: Double) async -> StageTrickPlayStart
    /// Ends trick play on the view if it runs; returns the media time to resume at (nil when it was not running).
    func stop(view number: Int) async -> Double?
    /// Writes a scrub preview of the view at `seconds` to `path`; returns the note to print.
    func preview(_ player: Player, source: MediaSource, seconds: Double, path: String) async -> String
}

/// Whether trick play started on a view, with the note to print.
public enum StageTrickPlayStart: Sendable, Equatable {
    case started(String)
    /// Not started (a local file, a playlist without I-frames, a download that failed): the view plays on.
    case refused(String)
}
