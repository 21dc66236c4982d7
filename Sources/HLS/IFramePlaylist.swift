import Foundation

/// One `#EXT-X-I-FRAME-STREAM-INF` variant of a multi-variant playlist: an I-frame-only media playlist.
public struct IFrameVariant: Sendable, Equatable {
    public var bandwidth: Int
    public var width: Int?
    public var height: Int?
    /// The I-frame playlist, resolved against the multi-variant playlist's URL.
    public var url: URL
}

/// One I-frame: where it sits in the media timeline and the byte range (inside an ordinary MPEG-TS segment)
/// that decodes to exactly that frame.
public struct IFrame: Sendable, Equatable {
    /// Seconds from the start of the presentation (the sum of the EXTINF durations before it).
    public var mediaTime: Double
    /// Seconds until the next I-frame (its EXTINF).
    public var duration: Double
    public var url: URL
    /// Byte range inside `url`; nil length = the whole resource.
    public var offset: Int
    public var length: Int?
}

/// Parsing of the two HLS playlist kinds trick play needs. Pure: text in, values out.
public enum IFramePlaylist {
    /// The I-frame variants of a multi-variant playlist, ascending by bandwidth.
    public static func variants(fromMaster text: String, baseURL: URL) throws(HLSPlaylistError) -> [IFrameVariant] {
        let lines = lines(of: text)
        guard lines.first?.hasPrefix("#EXTM3U") == true else {
            throw .malformed(url: baseURL.absoluteString, reason: "not an HLS playlist (no #EXTM3U)")
        }
        var result: [IFrameVariant] = []
        for line in lines where line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") {
            let attributes = HLSAttributeList.parse(String(line.dropFirst("#EXT-X-I-FRAME-STREAM-INF:".count)))
            guard let uri = attributes["URI"], let url = URL(string: uri, relativeTo: baseURL)?.absoluteURL else {
                throw .malformed(url: baseURL.absoluteString, reason: "EXT-X-I-FRAME-STREAM-INF without URI")
            }
            var variant = IFrameVariant(bandwidth: attributes["BANDWIDTH"].flatMap { Int($0) } ?? 0, url: url)
            if let size = attributes["RESOLUTION"].flatMap(HLSAttributeList.resolution) {
                variant.width = size.width; variant.height = size.height
            }
            result.append(variant)
        }
        guard !result.isEmpty else { throw .noIFramePlaylist(url: baseURL.absoluteString) }
        return result.sorted { $0.bandwidth < $1.bandwidth }
    }

    /// The variant for a view `height` pixels tall: the smallest at least that tall, else the largest.
    /// nil height = the smallest (scrub previews).
    public static func choose(_ variants: [IFrameVariant], forHeight height: Int?) -> IFrameVariant? {
        guard let height else { return variants.first }
        let byHeight = variants.sorted { ($0.height ?? 0, $0.bandwidth) < ($1.height ?? 0, $1.bandwidth) }
        return byHeight.first { ($0.height ?? 0) >= height } ?? byHeight.last
    }

    /// The I-frames of an I-frame media playlist (EXTINF + EXT-X-BYTERANGE + URI triples), in media order.
    public static func iFrames(fromMedia text: String, baseURL: URL) throws(HLSPlaylistError) -> [IFrame] {
        let lines = lines(of: text)
        guard lines.first?.hasPrefix("#EXTM3U") == true else {
            throw .malformed(url: baseURL.absoluteString, reason: "not an HLS playlist (no #EXTM3U)")
        }
        guard lines.contains(where: { $0.hasPrefix("#EXT-X-I-FRAMES-ONLY") }) else {
            throw .malformed(url: baseURL.absoluteString, reason: "no #EXT-X-I-FRAMES-ONLY (not an I-frame playlist)")
        }
        var frames: [IFrame] = []
        var time = 0.0
        var duration: Double?
        var range: (length: Int, offset: Int?)?
        var nextOffset: [URL: Int] = [:]   // a BYTERANGE without @offset continues after the previous one
        for line in lines {
            if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst("#EXTINF:".count).split(separator: ",", maxSplits: 1).first ?? ""
                guard let d = Double(value.trimmingCharacters(in: .whitespaces)) else {
                    throw .malformed(url: baseURL.absoluteString, reason: "bad EXTINF '\(line)'")
                }
                duration = d
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                let parts = line.dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@")
                guard let length = parts.first.flatMap({ Int($0) }) else {
                    throw .malformed(url: baseURL.absoluteString, reason: "bad EXT-X-BYTERANGE '\(line)'")
                }
                range = (length, parts.count > 1 ? Int(parts[1]) : nil)
            } else if !line.hasPrefix("#") {
                guard let d = duration, let url = URL(string: line, relativeTo: baseURL)?.absoluteURL else {
                    throw .malformed(url: baseURL.absoluteString, reason: "URI '\(line)' without EXTINF")
                }
                let offset = range.map { $0.offset ?? nextOffset[url] ?? 0 } ?? 0
                frames.append(IFrame(mediaTime: time, duration: d, url: url, offset: offset, length: range?.length))
                if let length = range?.length { nextOffset[url] = offset + length }
                time += d
                duration = nil; range = nil
            }
        }
        guard !frames.isEmpty else { throw .malformed(url: baseURL.absoluteString, reason: "no I-frames listed") }
        return frames
    }

    /// Index of the I-frame shown at `time`: the last one at or before it (the first one before the start).
    public static func index(in frames: [IFrame], at time: Double) -> Int {
        var lo = 0, hi = frames.count - 1, found = 0
        while lo <= hi {
            let mid = (lo + hi) / 2
            if frames[mid].mediaTime <= time + 1e-9 { found = mid; lo = mid + 1 } else { hi = mid - 1 }
        }
        return found
    }

    static func lines(of text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// Why an I-frame playlist could not be read. Trick play reports it as its own `TrickPlayError` (same words).
public enum HLSPlaylistError: Error, Equatable, CustomStringConvertible {
    /// The multi-variant playlist at `url` lists no EXT-X-I-FRAME-STREAM-INF.
    case noIFramePlaylist(url: String)
    case malformed(url: String, reason: String)

    public var description: String {
        switch self {
        case .noIFramePlaylist(let url): return "\(url) has no EXT-X-I-FRAME-STREAM-INF (no I-frame playlist)"
        case .malformed(let url, let reason): return "\(url): \(reason)"
        }
    }
}
