import Foundation
import HLS

/// Why trick play or a preview could not happen. `ViewError` adds the view's name.
public enum TrickPlayError: Error, Equatable, CustomStringConvertible {
    case download(url: String, reason: String)
    case noIFramePlaylist(url: String)
    case malformed(url: String, reason: String)
    case decode(url: String, reason: String)
    /// The preview picture could not be encoded for `path`.
    case encode(path: String, reason: String)

    /// The same failure of an HLS playlist, as trick play reports it.
    public init(_ error: HLSPlaylistError) {
        switch error {
        case .noIFramePlaylist(let url): self = .noIFramePlaylist(url: url)
        case .malformed(let url, let reason): self = .malformed(url: url, reason: reason)
        }
    }

    public var description: String {
        switch self {
        case .download(let url, let reason): return "cannot download \(url): \(reason)"
        case .noIFramePlaylist(let url): return "\(url) has no EXT-X-I-FRAME-STREAM-INF (no I-frame playlist)"
        case .malformed(let url, let reason): return "\(url): \(reason)"
        case .decode(let url, let reason): return "cannot decode the I-frame from \(url): \(reason)"
        case .encode(let path, let reason): return "cannot encode the preview for \(path): \(reason)"
        }
    }
}

/// A trick-play failure of one view: the one line the stage prints.
public struct TrickPlayViewError: Error, Equatable, CustomStringConvertible {
    public var view: String
    public var cause: TrickPlayError
    public init(view: String, cause: TrickPlayError) { self.view = view; self.cause = cause }
    public var description: String { "view \(view): trick play: \(cause)" }
}

/// The HLS I-frame playlist parsers (pure, in HLS), failing as trick play does.
enum TrickPlaylists {
    static func variants(fromMaster text: String, baseURL: URL) throws(TrickPlayError) -> [IFrameVariant] {
        do { return try IFramePlaylist.variants(fromMaster: text, baseURL: baseURL) } catch { throw TrickPlayError(error) }
    }

    static func iFrames(fromMedia text: String, baseURL: URL) throws(TrickPlayError) -> [IFrame] {
        do { return try IFramePlaylist.iFrames(fromMedia: text, baseURL: baseURL) } catch { throw TrickPlayError(error) }
    }
}
