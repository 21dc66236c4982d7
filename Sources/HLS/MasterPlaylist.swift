import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The variants of an HLS multi-variant ("master") playlist: what the allocator chooses between (Priority reads
/// them as its `Rung`s).
public struct MasterPlaylist: Sendable, Equatable {
    /// One EXT-X-STREAM-INF variant: its BANDWIDTH (bits/s) and RESOLUTION when given.
    public struct Variant: Sendable, Equatable {
        public var bandwidth: Int
        public var width: Int?
        public var height: Int?

        public init(bandwidth: Int, width: Int? = nil, height: Int? = nil) {
            self.bandwidth = bandwidth; self.width = width; self.height = height
        }
    }

    /// Ascending by bandwidth.
    public var variants: [Variant]

    /// Why a playlist could not be used.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case notAPlaylist
        case noVariants
        case download(String)
        public var description: String {
            switch self {
            case .notAPlaylist: return "not an HLS playlist (no #EXTM3U)"
            case .noVariants: return "no EXT-X-STREAM-INF variants (a media playlist, not a multi-variant one)"
            case .download(let why): return "cannot download the playlist: \(why)"
            }
        }
    }

    /// Parses EXT-X-STREAM-INF lines (BANDWIDTH, RESOLUTION); I-frame variants are not listed.
    public static func parse(_ text: String) throws -> MasterPlaylist {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { throw Problem.notAPlaylist }
        var variants: [Variant] = []
        for line in lines where line.hasPrefix("#EXT-X-STREAM-INF:") {
            let attributes = HLSAttributeList.parse(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
            guard let bandwidth = attributes["BANDWIDTH"].flatMap({ Int($0) }) else { continue }
            var variant = Variant(bandwidth: bandwidth)
            if let size = attributes["RESOLUTION"].flatMap(HLSAttributeList.resolution) {
                variant.width = size.width; variant.height = size.height
            }
            variants.append(variant)
        }
        guard !variants.isEmpty else { throw Problem.noVariants }
        return MasterPlaylist(variants: variants.sorted { $0.bandwidth < $1.bandwidth })
    }

    /// Downloads and parses a playlist (http(s) or file URL).
    public static func load(_ uri: String, timeout: TimeInterval = 5) async throws -> MasterPlaylist {
        guard let url = URL(string: uri) else { throw Problem.download("bad URL \(uri)") }
        if url.isFileURL {
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { throw Problem.notAPlaylist }
            return try parse(text)
        }
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        let (data, status): (Data, Int) = try await withCheckedThrowingContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: Problem.download(error.localizedDescription))
                } else {
                    continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode ?? 0))
                }
            }.resume()
        }
        guard status == 200 else { throw Problem.download("HTTP \(status)") }
        guard let text = String(data: data, encoding: .utf8) else { throw Problem.notAPlaylist }
        return try parse(text)
    }
}

/// Why an HLS view failed, in words: hlsdemux2 reports a missing or broken variant playlist only as "the stream
/// is of a different type" (gsthlsdemux.c, process_manifest), so this fetches the playlists itself and names the
/// first one that is missing or not a playlist.
public enum HLSDiagnosis {
    /// nil when the master and every playlist it names download and look like playlists.
    public static func explain(_ masterURI: String, timeout: TimeInterval = 3) async -> String? {
        guard let masterURL = URL(string: masterURI) else { return "bad URL \(masterURI)" }
        let master: String
        switch await fetch(masterURL, timeout: timeout) {
        case .failure(let why): return "playlist \(masterURL.lastPathComponent): \(why)"
        case .success(let text): master = text
        }
        guard master.hasPrefix("#EXTM3U") else { return "\(masterURL.lastPathComponent) is not an HLS playlist" }
        for uri in referencedPlaylists(master) {
            guard let url = URL(string: uri, relativeTo: masterURL)?.absoluteURL else { continue }
            switch await fetch(url, timeout: timeout) {
            case .failure(let why): return "variant \(uri): \(why)"
            case .success(let text) where !text.hasPrefix("#EXTM3U"): return "variant \(uri) is not an HLS playlist"
            default: continue
            }
        }
        return nil
    }

    /// The variant and rendition playlists a multi-variant playlist names (URI lines after EXT-X-STREAM-INF, and
    /// URI="…" attributes).
    static func referencedPlaylists(_ text: String) -> [String] {
        var result: [String] = []
        var expectURI = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-STREAM-INF") { expectURI = true; continue }
            if line.hasPrefix("#EXT-X-MEDIA") || line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF"),
               let uri = HLSAttributeList.parse(String(line.drop { $0 != ":" }.dropFirst()))["URI"] {
                result.append(uri)
            } else if expectURI && !line.isEmpty && !line.hasPrefix("#") {
                result.append(line)
                expectURI = false
            }
        }
        return result
    }

    enum Fetched { case success(String), failure(String) }

    static func fetch(_ url: URL, timeout: TimeInterval) async -> Fetched {
        if url.isFileURL {
            guard let data = FileManager.default.contents(atPath: url.path) else { return .failure("file not found") }
            return .success(String(decoding: data, as: UTF8.self))
        }
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        return await withCheckedContinuation { continuation in
            URLSession.shared.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure("server not answering (\(error.localizedDescription))"))
                    return
                }
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                guard status == 200 else {
                    let reason = HTTPURLResponse.localizedString(forStatusCode: status)
                    continuation.resume(returning: .failure("HTTP \(status) \(reason)"))
                    return
                }
                continuation.resume(returning: .success(String(decoding: data ?? Data(), as: UTF8.self)))
            }.resume()
        }
    }
}
