import Foundation
import GStreamer

/// Which view a player is: its 1-based number on the stage and a short name (the file name).
public struct ViewIdentity: Sendable, Hashable, CustomStringConvertible {
    public var number: Int
    public var name: String
    public init(number: Int, name: String) { self.number = number; self.name = name }
    /// "view 3 (broken.mp4)" — the prefix of every per-view error line.
    public var description: String { "view \(number) (\(name))" }
}

/// Where a view's media comes from.
public struct MediaSource: Sendable, Hashable, CustomStringConvertible {
    public var uri: String
    /// The local path when the source is a file.
    public var path: String?

    /// Accepts a path (relative or absolute) or a URI (file://, http://, https://, …).
    public init(_ pathOrURI: String) {
        if pathOrURI.contains("://") {
            uri = pathOrURI
            path = URL(string: pathOrURI).flatMap { $0.isFileURL ? $0.path : nil }
        } else {
            let absolute = URL(fileURLWithPath: pathOrURI).standardizedFileURL
            uri = absolute.absoluteString
            path = absolute.path
        }
    }

    /// The last path component, used as the view's default name. HLS playlists are usually all called
    /// master.m3u8 or index.m3u8, so for those the folder comes first ("angle1/master.m3u8").
    public var displayName: String {
        if let path { return (path as NSString).lastPathComponent }
        guard let url = URL(string: uri) else { return uri }
        let parent = url.deletingLastPathComponent().lastPathComponent
        if url.pathExtension.lowercased() == "m3u8", !parent.isEmpty, parent != "/" {
            return "\(parent)/\(url.lastPathComponent)"
        }
        return url.lastPathComponent
    }
    public var description: String { path ?? uri }
}

/// The app-level playback state (as in GstPlay): what the user sees, not GStreamer's element state.
public enum PlaybackState: String, Sendable, Equatable, CustomStringConvertible {
    case stopped = "STOPPED"
    case buffering = "BUFFERING"
    case paused = "PAUSED"
    case playing = "PLAYING"
    public var description: String { rawValue }
}

/// Why a view that was asked to play is not playing yet ("waiting to play at the specified rate").
public enum WaitingReason: Sendable, Equatable, CustomStringConvertible {
    /// Opening and prerolling the media.
    case loading
    /// Network buffering, with the fill level.
    case buffering(percent: Int)
    /// A flushing seek is in flight.
    case seeking
    /// Held back by a coordinator until every view is ready.
    case waitingForCoordinatedPlayback

    public var description: String {
        switch self {
        case .loading: return "loading"
        case .buffering(let p): return "buffering \(p)%"
        case .seeking: return "seeking"
        case .waitingForCoordinatedPlayback: return "waiting for coordinated playback"
        }
    }
}

/// State plus "waiting to play" reason, published together so listeners never see one without the other.
public struct PlayerStatus: Sendable, Equatable, CustomStringConvertible {
    public var state: PlaybackState
    /// Non-nil while the view is asked to play but is not playing yet.
    public var waitingToPlay: WaitingReason?
    public init(state: PlaybackState, waitingToPlay: WaitingReason? = nil) {
        self.state = state; self.waitingToPlay = waitingToPlay
    }
    public var description: String {
        if let waitingToPlay { return "\(state) (waiting: \(waitingToPlay))" }
        return state.description
    }
}

/// What a view is showing, learnt from its stream collection.
public struct ViewMediaInfo: Sendable, Equatable {
    public var width: Int?
    public var height: Int?
    public var frameRate: Double?
    public var videoCodec: String?
    public var audioCodec: String?
    public var audioChannels: Int?
    public var hasVideo: Bool { width != nil }
    /// "640x360" or "audio only".
    public var resolutionText: String {
        if let width, let height { return "\(width)x\(height)" }
        return audioCodec == nil ? "no streams" : "audio only"
    }
}

/// Something that happened to a player, in order.
public enum PlayerEvent: Sendable {
    case status(PlayerStatus)
    case mediaInfo(ViewMediaInfo)
    case seekCompleted(position: ClockTime)
    case rateChanged(Double)
    /// The audio output was corked (an interruption began) or uncorked (it ended).
    case interruption(began: Bool)
    /// The PulseAudio stream was lost (server stopped or restarted: the view plays on silently) or is back.
    case audioOutput(lost: Bool, reason: String)
    /// The view's PulseAudio stream was replaced by a new one at the same position (the old one was not lost:
    /// `reason` says what was wrong with it).
    case audioStreamReplaced(reason: String)
    case endOfStream
    /// A GStreamer warning from the pipeline (not shown: elements warn about much that does not matter here).
    case warning(String)
    /// A sentence of the player's own for the user, naming the view (the stage prints it as a note).
    case notice(String)
    case failed(PlayerError)
}

/// A view's failure: which view, and a typed cause. `description` is the one line printed for it.
public struct PlayerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Cause: Sendable, Equatable, CustomStringConvertible {
        case fileNotFound(path: String)
        case permissionDenied(path: String)
        /// The data could not be parsed (truncated, corrupt, not media at all).
        case corruptMedia(String)
        /// A stream needs a decoder that is not installed.
        case unsupportedCodec(String)
        /// Nothing in the media could be decoded into audio or video.
        case noDecodableStream(String)
        /// The data stops before the duration its headers announce.
        case truncatedMedia(endedAt: ClockTime, duration: ClockTime)
        /// HTTP error, connection refused, server gone.
        case network(String)
        /// A GStreamer element the player needs is not installed.
        case missingElement(String)
        /// Output (audio/video sink) failed.
        case output(String)
        case timeout(String)
        /// No media was loaded before a transport command.
        case noMediaLoaded
        /// A seek target after the media's end.
        case seekPastEnd(target: ClockTime, duration: ClockTime)
        /// A playback rate the player does not play (zero or negative).
        case invalidRate(Double)
        /// The pipeline refused a flushing seek.
        case seekRefused(position: ClockTime, rate: Double)
        /// The pipeline refused a state change and the bus said nothing more precise in time.
        case stateChangeFailed(to: ElementState)
        /// A coordinated start's pipeline refused PLAYING.
        case startFailed(at: ClockTime)
        /// The pipeline could not be built (a property or link GStreamer refused).
        case construction(GStreamerError)
        /// A GStreamer error of no kind above, with its text (the domain and code are in `underlying`).
        case gstreamer(String)
        /// A failure reported by another layer while the view was set up (observer, routing, coordination).
        case setup(String)
        /// A failed view's pipeline that did not reach NULL (a GStreamer teardown deadlock): it cannot be reused.
        case pipelineStuck(String)

        public var description: String {
            switch self {
            case .fileNotFound(let p): return "file not found: \(p)"
            case .permissionDenied(let p): return "permission denied: \(p)"
            case .corruptMedia(let m): return "corrupt or unreadable media: \(m)"
            case .unsupportedCodec(let m): return "unsupported codec: \(m)"
            case .noDecodableStream(let m): return "no decodable stream: \(m)"
            case .truncatedMedia(let end, let duration):
                return "truncated media: data ends at \(end) of \(duration)"
            case .network(let m): return "network error: \(m)"
            case .missingElement(let m): return "missing GStreamer element: \(m)"
            case .output(let m): return "output error: \(m)"
            case .timeout(let m): return "timed out: \(m)"
            case .noMediaLoaded: return "no media loaded"
            case .seekPastEnd: return "seek past the end"
            case .invalidRate: return "rate must be positive"
            case .seekRefused(let position, let rate): return "seek to \(position) at rate \(rate) refused"
            case .stateChangeFailed(let state): return "cannot change state to \(state)"
            case .startFailed(let instant): return "cannot start at \(instant)"
            case .construction(let error): return error.description
            case .gstreamer(let m), .setup(let m): return m
            case .pipelineStuck(let m): return "pipeline stuck: \(m)"
            }
        }
    }

    public var view: ViewIdentity
    public var cause: Cause
    /// The GStreamer error behind it, when there was one (domain, code, debug text, source element).
    public var underlying: BusMessage.ErrorInfo?

    public init(view: ViewIdentity, cause: Cause, underlying: BusMessage.ErrorInfo? = nil) {
        self.view = view; self.cause = cause; self.underlying = underlying
    }

    /// "view 3 (broken.mp4): corrupt or unreadable media: …"
    public var description: String { "\(view): \(cause)" }

    /// What the file system says about a local source when an error names a resource (read by the caller:
    /// `classify` itself stays pure).
    enum LocalFileAccess: Sendable, Equatable {
        case missing, unreadable, readable
    }

    /// Maps a GStreamer error message to a typed cause. The typed GError code (`GStreamerErrorCode`) says what
    /// kind of failure it is; the source element says where. `fileAccess` is what the file system said about
    /// `source.path` (nil for a network source).
    /// `noDecodableStream` as soon as the facts say so, without waiting for an error: the media has audio or video
    /// streams and every one of them lacks its decoder (a missing-plugin message for its media type). GStreamer's
    /// own error for this case (a demuxer's "not linked") is not always posted: a pipeline with only such streams
    /// has been seen to wait for a preroll that cannot come. Nil while any audio or video stream may decode.
    static func undecodableMedia(streams: [BusMessage.StreamInfo], missingDecoders: Set<String>,
                                 missingPlugins: [String]) -> Cause? {
        let playable = streams.filter { $0.kind == .audio || $0.kind == .video }
        guard !playable.isEmpty, !missingPlugins.isEmpty else { return nil }
        for stream in playable {
            guard let caps = stream.caps, let type = caps.split(separator: ",").first else { return nil }
            if !missingDecoders.contains(type.trimmingCharacters(in: .whitespaces)) { return nil }
        }
        var unique: [String] = []
        for plugin in missingPlugins where !unique.contains(plugin) { unique.append(plugin) }
        return .noDecodableStream("no decoder installed for \(unique.joined(separator: ", "))")
    }

    static func fileAccess(of source: MediaSource) -> LocalFileAccess? {
        guard let path = source.path else { return nil }
        if !FileManager.default.fileExists(atPath: path) { return .missing }
        return FileManager.default.isReadableFile(atPath: path) ? .readable : .unreadable
    }

    static func classify(_ info: BusMessage.ErrorInfo, source: MediaSource, fileAccess: LocalFileAccess?,
                         missingPlugins: [String]) -> Cause {
        let text = info.message
        if !missingPlugins.isEmpty {
            // The pipeline failed and decoders were missing: none of its streams could be decoded.
            var unique: [String] = []
            for plugin in missingPlugins where !unique.contains(plugin) { unique.append(plugin) }
            return .noDecodableStream("no decoder installed for \(unique.joined(separator: ", "))")
        }
        switch info.kind {
        case .resource:
            guard let path = source.path else { return .network(text) }
            if fileAccess == .missing { return .fileNotFound(path: path) }
            if fileAccess == .unreadable { return .permissionDenied(path: path) }
            if info.source.factory?.hasSuffix("sink") == true { return .output(text) }
            return .corruptMedia(text)
        case .stream(.codecNotFound): return .unsupportedCodec(text)
        case .stream(.typeNotFound), .stream(.wrongType), .stream(.demux), .stream(.format): return .corruptMedia(text)
        case .stream(.decode): return .corruptMedia("cannot decode: \(text)")
        case .stream(.failed) where text.localizedCaseInsensitiveContains("no suitable") ||
                                    text.localizedCaseInsensitiveContains("decod"):
            return .noDecodableStream(text)
        case .core(.missingPlugin): return .missingElement(text)
        default: return .gstreamer(text)
        }
    }
}

/// A transport command as a coordinator sees it.
public enum TransportCommand: Sendable, Equatable {
    case play
    case pause
    case seek(ClockTime)
    case seekBy(Double)
    case rate(Double)
    /// The view was reloaded (an HLS view whose server came back): it takes the group's time and rate and starts
    /// with the group, which does not move.
    case rejoin
}

/// Intercepts a player's transport commands: the coordination layer installs one so that a command from any
/// view goes to the whole group. Return true when the command was handled (the player then does nothing
/// itself), false to let the player act alone (e.g. while it is suspended from its group).
public protocol TransportInterceptor: AnyObject, Sendable {
    func intercept(_ command: TransportCommand, player: Player) async throws -> Bool
}

/// The first start of a loaded view and its one restart (`Player.restartStalledStart`). Owned by the player actor.
/// Two signs of a stall: nothing at the sinks after `limit` (any stall), or, much sooner, a streaming task that
/// stopped itself and stays stopped for `stoppedTaskLimit` while nothing reached a sink (the stall GStreamer 1.22
/// shows: its demuxer's loop paused on a FLUSHING push). Pure: the player passes in what it reads and the time.
struct StartStall {
    /// How long a local file's first start may show nothing at its sinks before it counts as stalled. A start
    /// takes well under a second here, a few on two loaded cores; a slow one restarted costs one more start.
    static let limit: Duration = .seconds(5)
    /// How long a stopped streaming task may stay stopped in a first start with nothing at the sinks. No task but
    /// typefind's (which always stops once it has found the type) stopped in healthy starts (24 starts sampled
    /// every 10 ms); a task stopped by an error stops with the error, which reaches the player well within this.
    static let stoppedTaskLimit: Duration = .seconds(1)

    private(set) var mayRestart = true
    /// Since when the same kind of evidence (some stopped task) has been seen without a break; nil when none is.
    private var stoppedSince: ContinuousClock.Instant?

    /// A state change settled: the start did not stall, and later changes are not starts.
    mutating func settled() { mayRestart = false }
    mutating func restarted() { mayRestart = false }

    /// Takes the stopped streaming tasks read at `now` (typefind's left out) and answers whether the start counts
    /// as stalled by them: some task was seen stopped at every reading for `stoppedTaskLimit`.
    mutating func noteStoppedTasks(_ tasks: [String], at now: ContinuousClock.Instant) -> Bool {
        guard mayRestart, !tasks.isEmpty else {
            stoppedSince = nil
            return false
        }
        let since = stoppedSince ?? now
        stoppedSince = since
        return now - since >= Self.stoppedTaskLimit
    }
}
