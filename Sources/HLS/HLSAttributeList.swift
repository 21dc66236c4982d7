import Foundation

/// An HLS attribute list (RFC 8216 §4.2): the `KEY=VALUE,KEY="quoted, value"` text after a tag such as
/// `#EXT-X-STREAM-INF:` or `#EXT-X-I-FRAME-STREAM-INF:`. Here because every part that reads an HLS view's
/// playlists (the priority manager's ladder, trick play's I-frame variants) needs the same reading of it.
public enum HLSAttributeList {
    /// The attributes by name; quotes are removed from quoted values (commas inside them are kept).
    public static func parse(_ text: String) -> [String: String] {
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

    /// A RESOLUTION value (`1920x1080`) as width and height; nil when it is not two integers.
    public static func resolution(_ value: String) -> (width: Int, height: Int)? {
        let parts = value.lowercased().split(separator: "x").compactMap { Int($0) }
        return parts.count == 2 ? (parts[0], parts[1]) : nil
    }
}
