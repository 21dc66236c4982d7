import Foundation

/// Turns what the user named on the command line into the views to play: a plain `.m3u`/`.m3u8` playlist becomes
/// its entries, a folder its media files (sorted by name), anything else stays one view. An HLS playlist (any
/// `#EXT-X-` tag) is one view: the HLS demuxer plays it, it is no list of views. URLs are kept as they are: a remote
/// playlist is not fetched here (a remote `.m3u8` is almost always HLS).
///
/// Pure apart from reading the named files and folders (`PlaylistExpansionTests` runs in milliseconds on a temp
/// folder). Stateless.
public enum PlaylistExpansion {
    /// What the expansion gives: the views' media, in order, and the notes to print once (skipped files).
    public struct Result: Sendable, Equatable {
        public var media: [String]
        public var notes: [String]
    }

    /// File name extensions taken as media in a folder (lower case). Others are skipped with one note per folder.
    public static let mediaExtensions: Set<String> = [
        "mp4", "m4v", "mov", "mkv", "webm", "avi", "ts", "m2ts", "mts", "mpg", "mpeg", "ogv", "ogg", "flv", "wmv",
        "3gp", "mp3", "m4a", "aac", "flac", "wav", "opus", "oga", "mka", "m3u", "m3u8",
    ]
    /// Playlists nest at most this deep (a playlist naming itself must end).
    static let maxDepth = 8

    public static func expand(_ items: [String], fileManager: FileManager = .default) throws(PlaylistError) -> Result {
        var result = Result(media: [], notes: [])
        for item in items { try expand(item, depth: 0, into: &result, fileManager: fileManager) }
        return result
    }

    /// `expand` on a queue of its own: it reads files and folders, which may block, so never on Swift's cooperative
    /// threads (a stdin `add` runs there).
    public static func expandOffPool(_ items: [String]) async throws(PlaylistError) -> Result {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Swift.Result<Result, PlaylistError>, Never>) in
            readQueue.async {
                do throws(PlaylistError) { continuation.resume(returning: .success(try expand(items))) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    /// Where `expandOffPool` reads; it owns nothing.
    private static let readQueue = DispatchQueue(label: "multiview.playlist-expansion")

    private static func expand(_ item: String, depth: Int, into result: inout Result,
                               fileManager: FileManager) throws(PlaylistError) {
        // Only local paths are looked into; a file:// URL is a local path too.
        let path: String
        if item.contains("://") {
            guard let url = URL(string: item), url.isFileURL else { return result.media.append(item) }
            path = url.path
        } else {
            path = item
        }
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            // The view fails with "file not found", naming it, as any missing file does.
            return result.media.append(item)
        }
        if isDirectory.boolValue {
            guard depth < maxDepth else { throw .tooDeep(path) }
            return try expandFolder(path, depth: depth, into: &result, fileManager: fileManager)
        }
        let ext = (path as NSString).pathExtension.lowercased()
        guard ext == "m3u" || ext == "m3u8" else { return result.media.append(item) }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            // Not UTF-8 (Latin-1 playlists exist) or unreadable.
            guard let data = fileManager.contents(atPath: path), let latin1 = String(data: data, encoding: .isoLatin1)
            else { throw .unreadable(path) }
            text = latin1
        }
        guard !isHLS(text) else { return result.media.append(item) }
        guard depth < maxDepth else { throw .tooDeep(path) }
        let entries = entries(of: text, playlistPath: path)
        guard !entries.isEmpty else { throw .empty(path, folder: false) }
        for entry in entries { try expand(entry, depth: depth + 1, into: &result, fileManager: fileManager) }
    }

    private static func expandFolder(_ path: String, depth: Int, into result: inout Result,
                                     fileManager: FileManager) throws(PlaylistError) {
        let names: [String]
        do { names = try fileManager.contentsOfDirectory(atPath: path) } catch { throw .unreadable(path) }
        var media: [String] = []
        var skipped: [String] = []
        for name in names.sorted(by: byName) where !name.hasPrefix(".") {
            let full = (path as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            _ = fileManager.fileExists(atPath: full, isDirectory: &isDirectory)
            if !isDirectory.boolValue, mediaExtensions.contains((name as NSString).pathExtension.lowercased()) {
                media.append(full)
            } else {
                skipped.append(name + (isDirectory.boolValue ? "/" : ""))
            }
        }
        if !skipped.isEmpty {
            let shown = skipped.prefix(3).joined(separator: ", ") + (skipped.count > 3 ? ", …" : "")
            result.notes.append("\(path): skipped \(skipped.count) item\(skipped.count == 1 ? "" : "s") that \(skipped.count == 1 ? "is" : "are") not media (\(shown))")
        }
        guard !media.isEmpty else { throw .empty(path, folder: true) }
        for file in media { try expand(file, depth: depth + 1, into: &result, fileManager: fileManager) }
    }

    /// "clip2.mp4" before "clip10.mp4": names compared as people read them (digits as numbers).
    static func byName(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: [.numeric, .caseInsensitive]) == .orderedAscending
    }

    /// An HLS playlist carries `#EXT-X-` tags (`#EXT-X-TARGETDURATION`, `#EXT-X-STREAM-INF`, …); a plain one only
    /// `#EXTM3U` and `#EXTINF` (and other comments).
    public static func isHLS(_ text: String) -> Bool {
        text.split(whereSeparator: \.isNewline).contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#EXT-X-") }
    }

    /// The entries of a plain playlist: every line that is not empty and not a comment; a relative path resolved
    /// against the playlist's folder, a URL (`http://…`, `file://…`) kept.
    static func entries(of text: String, playlistPath: String) -> [String] {
        let folder = (playlistPath as NSString).deletingLastPathComponent
        return text.split(whereSeparator: \.isNewline).compactMap { line -> String? in
            var entry = line.trimmingCharacters(in: .whitespaces)
            if entry.hasPrefix("\u{FEFF}") { entry.removeFirst() }   // a byte-order mark before the first line
            guard !entry.isEmpty, !entry.hasPrefix("#") else { return nil }
            if entry.contains("://") || entry.hasPrefix("/") { return entry }
            return (folder.isEmpty ? entry : (folder as NSString).appendingPathComponent(entry))
        }
    }
}

/// A playlist or folder that gives no views. Its description is the one line printed.
public enum PlaylistError: Error, Equatable, CustomStringConvertible {
    /// A playlist with no entries, or a folder with no media files.
    case empty(String, folder: Bool)
    /// A playlist or folder that could not be read.
    case unreadable(String)
    /// Playlists naming each other (or themselves) deeper than `PlaylistExpansion.maxDepth`.
    case tooDeep(String)

    public var description: String {
        switch self {
        case .empty(let path, let folder):
            return folder ? "\(path): no media files in this folder (\(PlaylistExpansion.mediaExtensionsText))"
                          : "\(path): the playlist names no media"
        case .unreadable(let path): return "\(path): cannot be read (permission?)"
        case .tooDeep(let path): return "\(path): playlists nested more than \(PlaylistExpansion.maxDepth) deep (does one name itself?)"
        }
    }
}

extension PlaylistExpansion {
    static var mediaExtensionsText: String {
        "looked for " + ["mp4", "mkv", "webm", "mov", "ts", "mp3", "…"].joined(separator: ", ")
    }
}
