import Foundation

/// Text frame ⇄ `GroupMessage`: the size limit, the version and the message type are checked before the body
/// is decoded, so each failure has its own `ProtocolViolation`. Pure (no state).
public enum GroupMessageCodec {
    /// The largest frame either side accepts (a welcome with dozens of participants is a few KiB).
    public static let maximumFrameBytes = 64 * 1024

    public static func encode(_ message: GroupMessage) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Every payload is a plain struct or enum of strings and numbers: encoding cannot fail (a NaN rate is
        // refused before it gets here; JSONEncoder would throw on it, and the fallback says so).
        guard let data = try? encoder.encode(message), let text = String(data: data, encoding: .utf8) else {
            return #"{"type":"error","v":\#(groupProtocolVersion),"body":{"code":"malformed","detail":"unencodable message"}}"#
        }
        return text
    }

    public static func decode(_ text: String) throws(ProtocolViolation) -> GroupMessage {
        let data = Data(text.utf8)
        guard data.count <= maximumFrameBytes else {
            throw .oversized(bytes: data.count, limit: maximumFrameBytes)
        }
        let decoder = JSONDecoder()
        let header: GroupEnvelopeHeader
        do { header = try decoder.decode(GroupEnvelopeHeader.self, from: data) } catch {
            throw .malformed("not a message envelope ({\"v\",\"type\",\"body\"})")
        }
        guard header.v == groupProtocolVersion else { throw .unsupportedVersion(header.v) }
        guard GroupMessage.Kind(rawValue: header.type) != nil else { throw .unknownType(header.type) }
        do { return try decoder.decode(GroupMessage.self, from: data) } catch {
            throw .malformed("\(header.type): body does not match the message")
        }
    }
}
