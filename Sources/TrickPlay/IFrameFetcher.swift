import Foundation
import HLS
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads playlists and I-frame byte ranges over HTTP (Range requests) or from file URLs.
///
/// An actor so its one URLSession (and the byte counter the bench/tests read) has a single owner; URLSession
/// itself calls back on its own delegate queue, which only resumes a continuation.
public actor IFrameFetcher {
    private let session: URLSession
    private let timeout: TimeInterval
    /// Body bytes received so far (diagnostics: trick play should fetch only the I-frames, not whole segments).
    public private(set) var bytesFetched = 0

    public init(timeout: TimeInterval = 5) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
        self.timeout = timeout
    }

    deinit { session.invalidateAndCancel() }

    /// The text of a playlist.
    public func text(_ url: URL) async throws(TrickPlayError) -> String {
        let data = try await bytes(url, offset: 0, length: nil)
        return String(decoding: data, as: UTF8.self)
    }

    /// The bytes of one I-frame.
    public func bytes(of frame: IFrame) async throws(TrickPlayError) -> Data {
        try await bytes(frame.url, offset: frame.offset, length: frame.length)
    }

    /// `length` bytes from `offset` (nil = to the end). A server that ignores Range (200) is sliced here.
    public func bytes(_ url: URL, offset: Int, length: Int?) async throws(TrickPlayError) -> Data {
        if url.isFileURL {
            guard let data = try? Data(contentsOf: url) else {
                throw .download(url: url.absoluteString, reason: "cannot read the file")
            }
            let slice = slice(data, offset: offset, length: length)
            bytesFetched += slice.count
            return slice
        }
        var request = URLRequest(url: url)
        request.timeoutInterval = timeout
        if offset > 0 || length != nil {
            let last = length.map { String(offset + $0 - 1) } ?? ""
            request.setValue("bytes=\(offset)-\(last)", forHTTPHeaderField: "Range")
        }
        let result: Result<(Data, Int), TrickPlayError> = await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(returning: .failure(.download(url: url.absoluteString,
                                                                       reason: error.localizedDescription)))
                } else {
                    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                    continuation.resume(returning: .success((data ?? Data(), status)))
                }
            }.resume()
        }
        let (data, status) = try result.get()
        let body: Data
        switch status {
        case 206: body = data
        case 200: body = slice(data, offset: offset, length: length)
        default: throw .download(url: url.absoluteString, reason: "HTTP \(status)")
        }
        if let length, body.count < length {
            throw .download(url: url.absoluteString, reason: "short read: \(body.count) of \(length) bytes")
        }
        bytesFetched += body.count
        return body
    }

    private func slice(_ data: Data, offset: Int, length: Int?) -> Data {
        let start = min(offset, data.count)
        let end = length.map { min(start + $0, data.count) } ?? data.count
        return data.subdata(in: start..<end)
    }
}
