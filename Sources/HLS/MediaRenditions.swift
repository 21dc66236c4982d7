import Foundation

/// The EXT-X-MEDIA renditions of an HLS multi-variant playlist: the audio tracks and subtitles it declares, with
/// their languages (`multiview info` said `und, und` for a master declaring en and fr: the discoverer sees the
/// streams but not the playlist's LANGUAGE attributes). Pure parsing; `load` fetches the playlist first.
public struct MediaRendition: Sendable, Equatable {
    /// AUDIO, SUBTITLES, CLOSED-CAPTIONS or VIDEO.
    public var type: String
    public var name: String?
    /// LANGUAGE (RFC 5646: "en", "fr", "pt-BR").
    public var language: String?
    public var isDefault: Bool

    public init(type: String, name: String? = nil, language: String? = nil, isDefault: Bool = false) {
        self.type = type; self.name = name; self.language = language; self.isDefault = isDefault
    }

    /// Every EXT-X-MEDIA line, in playlist order.
    public static func parse(_ text: String) -> [MediaRendition] {
        text.split(whereSeparator: \.isNewline).compactMap { raw -> MediaRendition? in
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("#EXT-X-MEDIA:") else { return nil }
            let attributes = HLSAttributeList.parse(String(line.dropFirst("#EXT-X-MEDIA:".count)))
            guard let type = attributes["TYPE"] else { return nil }
            return MediaRendition(type: type, name: attributes["NAME"], language: attributes["LANGUAGE"],
                                  isDefault: attributes["DEFAULT"] == "YES")
        }
    }

    /// The playlist at `uri` (file or http(s)) and its renditions; nil when it cannot be fetched or is no
    /// multi-variant playlist (no EXT-X-STREAM-INF).
    public static func load(_ uri: String, timeout: TimeInterval = 3) async -> (variants: Int, renditions: [MediaRendition])? {
        guard let url = URL(string: uri), case .success(let text) = await HLSDiagnosis.fetch(url, timeout: timeout),
              let master = try? MasterPlaylist.parse(text) else { return nil }
        return (master.variants.count, parse(text))
    }
}
