import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The variants of an HLS multi-variant ("master") playlist: what the allocator chooses between.
public struct MasterPlaylist: Sendable, Equatable {
    public var rungs: [Rung]

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

    /// Parses EXT-X-STREAM-INF lines (BANDWIDTH, RESOLUTION); I-frame variants are not rungs.
    public static func parse(_ text: String) throws -> MasterPlaylist {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { throw Problem.notAPlaylist }
        var rungs: [Rung] = []
        for line in lines where line.hasPrefix("#EXT-X-STREAM-INF:") {
            let attributes = Self.attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
            guard let bandwidth = attributes["BANDWIDTH"].flatMap({ Int($0) }) else { continue }
            var rung = Rung(bandwidth: bandwidth)
            if let resolution = attributes["RESOLUTION"] {
                let parts = resolution.lowercased().split(separator: "x").compactMap { Int($0) }
                if parts.count == 2 { rung.width = parts[0]; rung.height = parts[1] }
            }
            rungs.append(rung)
        }
        guard !rungs.isEmpty else { throw Problem.noVariants }
        return MasterPlaylist(rungs: rungs.sorted { $0.bandwidth < $1.bandwidth })
    }

    /// KEY=VALUE,KEY="quoted, value" pairs.
    static func attributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var key = "", value = "", inKey = true, quoted = false
        func flush() {
            if !key.isEmpty { result[key.trimmingCharacters(in: .whitespaces)] = value }
            key = ""; value = ""; inKey = true
        }
        for ch in text {
            if inKey {
                if ch == "=" { inKey = false } else if ch == "," { flush() } else { key.append(ch) }
            } else if ch == "\"" {
                quoted.toggle()
            } else if ch == "," && !quoted {
                flush()
            } else {
                value.append(ch)
            }
        }
        flush()
        return result
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
