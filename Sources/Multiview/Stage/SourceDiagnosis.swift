import Foundation
import GStreamer

/// What the stage can say about a view's source in the user's terms where GStreamer says little: a scheme no
/// installed source reads (`foo://x` gave "no decoder installed for FOO protocol source"), and an HTTP server that
/// cannot be reached (souphttpsrc says only "Internal data stream error." for a refused connection).
/// Stateless.
public enum SourceDiagnosis {
    /// The cause a view with this source fails with before it is built, or nil when it can be tried: a scheme no
    /// installed source reads, or an HLS playlist on the local disk.
    static func refusedBeforePlaying(_ source: MediaSource) -> PlayerError.Cause? {
        (unknownScheme(source) ?? localHLS(source)).map { .setup($0) }
    }

    /// A scheme no installed GStreamer source reads (`foo://x`), in words; nil for a path or a readable scheme.
    public static func unknownScheme(_ source: MediaSource) -> String? {
        guard source.path == nil, let colon = source.uri.range(of: "://") else { return nil }
        let scheme = source.uri[..<colon.lowerBound].lowercased()
        if !scheme.isEmpty, GStreamer.canRead(scheme: scheme) { return nil }
        return "unknown scheme '\(scheme)' in \(source.uri): give a file path, or a file://, http://, https:// or rtsp:// URI"
    }

    /// An HLS playlist on the local disk: GStreamer's HLS demuxer fetches fragments over HTTP only (it failed with
    /// "No error message for domain gst-uri-error-quark" and a GLib warning).
    static func localHLS(_ source: MediaSource) -> String? {
        guard let path = source.path, path.lowercased().hasSuffix(".m3u8"),
              let data = FileManager.default.contents(atPath: path),
              PlaylistExpansion.isHLS(String(decoding: data.prefix(65_536), as: UTF8.self)) else { return nil }
        return "\(path) is an HLS playlist on disk: HLS plays over http(s) only; serve its folder (e.g. python3 -m http.server) and give the http:// URL"
    }

    /// Why an http(s) source's server cannot be reached ("connection refused by 127.0.0.1:9 (…)"), nil when it can
    /// (or the source is not http). Off the cooperative pool, at most `timeout`.
    public static func unreachable(_ source: MediaSource) async -> String? {
        guard let url = URL(string: source.uri), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: reach(host: host, port: port)) }
        }
    }

    /// An http(s) view's failure with the reason the server could not be reached, when it could not; else as it
    /// was. Off the cooperative pool (a blocking connect on a thread of Dispatch's), at most `timeout`.
    static func refine(_ failure: PlayerError, source: MediaSource?) async -> PlayerError {
        if case .network = failure.cause { return failure }
        guard let source, let problem = await unreachable(source) else { return failure }
        return PlayerError(view: failure.view, cause: .network(problem), underlying: failure.underlying)
    }

    static let timeout: Int32 = 1000   // ms

    /// nil when a TCP connection to host:port opens; else why not, in words.
    static func reach(host: String, port: Int) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return "host \(host) not found"
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        if connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 { return nil }
        var code = errno
        if code == EINPROGRESS {
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&descriptor, 1, timeout) == 1 else { return "\(host):\(port) does not answer (no connection within 1 s)" }
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return nil }
        }
        switch code {
        case ECONNREFUSED: return "connection refused by \(host):\(port) (no server listening there)"
        case ENETUNREACH, EHOSTUNREACH: return "\(host):\(port) is unreachable (no route to it)"
        case ETIMEDOUT: return "\(host):\(port) does not answer (connection timed out)"
        default: return "cannot connect to \(host):\(port) (\(String(cString: strerror(code))))"
        }
    }
}
