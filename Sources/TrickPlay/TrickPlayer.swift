import Foundation
import HLS

/// A picture shown during trick play.
public struct TrickFrame: Sendable {
    /// Media time of the I-frame shown (a multiple of the I-frame interval).
    public var mediaTime: Double
    /// Trick-play clock when it was shown (start + wall time × rate).
    public var clock: Double
    /// Index in the I-frame playlist.
    public var index: Int
    public var picture: DecodedFrame
}

/// What a running trick play reports, in order.
public enum TrickPlayEvent: Sendable {
    case frame(TrickFrame)
    /// The clock hit the start (rewind) or the end (fast-forward); `position` is where it stopped.
    case reachedEnd(position: Double)
    case failed(TrickPlayViewError)
}

/// Fast-forward / rewind and scrub previews of one view from its HLS I-frame playlists — the behaviour of
/// AVPlayer's `rate = ±8` over an asset with an I-frame playlist, and of its scrub thumbnails.
///
/// Trick play runs a media clock at `rate` from the start position and shows, whenever the clock crosses an
/// I-frame boundary, the I-frame it crossed (`TrickPlayChoice`) (fetched as a byte range, decoded alone). The clock
/// starts once the I-frame at the start position is shown; from then on a slow fetch or decode skips I-frames
/// rather than slowing the clock, so 8× stays 8×. `stop()` returns the clock so the
/// view's ordinary player can seek there and resume at 1×.
///
/// Owner: this actor owns the playlists, the clock and the running task; the fetcher (an actor) and the
/// decoder (its own serial queue) own theirs.
public actor TrickPlayer {
    public nonisolated let view: String
    public nonisolated let masterURL: URL
    private let viewHeight: Int?
    private let fetcher: IFrameFetcher
    private let decoder: IFrameDecoder

    private var trickFrames: [IFrame] = []
    private var previewFrames: [IFrame] = []
    public private(set) var trickVariant: IFrameVariant?
    public private(set) var previewVariant: IFrameVariant?

    private struct Run { var wallStart: ContinuousClock.Instant; var mediaStart: Double; var rate: Double }
    private var run: Run?
    private var stoppedAt: Double?
    private var task: Task<Void, Never>?

    /// - Parameters:
    ///   - viewHeight: the height the view shows (picks the trick-play rung); nil = the largest rung.
    public init(view: String, master: URL, viewHeight: Int? = nil,
                fetcher: IFrameFetcher = IFrameFetcher(), decoder: IFrameDecoder = IFrameDecoder()) {
        self.view = view; self.masterURL = master; self.viewHeight = viewHeight
        self.fetcher = fetcher; self.decoder = decoder
    }

    /// Downloads the multi-variant playlist and both I-frame playlists (trick-play rung and preview rung).
    public func load() async throws(TrickPlayViewError) {
        if !trickFrames.isEmpty { return }
        do {
            let master = try await fetcher.text(masterURL)
            let variants = try TrickPlaylists.variants(fromMaster: master, baseURL: masterURL)
            let trick = IFramePlaylist.choose(variants, forHeight: viewHeight ?? Int.max)!
            let preview = IFramePlaylist.choose(variants, forHeight: nil)!
            trickFrames = try TrickPlaylists.iFrames(fromMedia: await fetcher.text(trick.url), baseURL: trick.url)
            previewFrames = trick.url == preview.url ? trickFrames
                : try TrickPlaylists.iFrames(fromMedia: await fetcher.text(preview.url), baseURL: preview.url)
            trickVariant = trick; previewVariant = preview
        } catch {
            throw TrickPlayViewError(view: view, cause: error)
        }
    }

    /// The I-frames trick play shows (after `load`).
    public var frames: [IFrame] { trickFrames }

    /// Total media duration covered by the I-frame playlist.
    public var duration: Double { trickFrames.last.map { $0.mediaTime + $0.duration } ?? 0 }

    /// A scrub preview: the I-frame at or before `time`, from the smallest rung (scaled when a size is given).
    public func preview(at time: Double, width: Int? = nil, height: Int? = nil) async throws(TrickPlayViewError)
        -> DecodedFrame {
        try await load()
        let frame = previewFrames[IFramePlaylist.index(in: previewFrames, at: time)]
        do {
            let bytes = try await fetcher.bytes(of: frame)
            return try await decoder.decode(bytes, from: frame.url, width: width, height: height)
        } catch {
            throw TrickPlayViewError(view: view, cause: error)
        }
    }

    /// Starts trick play at `rate` (e.g. 8 or −8) from media time `from`; replaces a running one.
    public func play(rate: Double, from: Double,
                     events: @escaping @Sendable (TrickPlayEvent) -> Void) async throws(TrickPlayViewError) {
        precondition(rate != 0, "trick play needs a non-zero rate")
        try await load()
        _ = stop()
        let start = min(max(from, 0), duration)
        // The clock starts once the first I-frame is on screen: its fetch and decode (a fresh process's first
        // decode loads the decoder's plugins) took over a second on two loaded cores, and a clock already running
        // skipped every I-frame of that second (a 1.25 s rewind showed its first and last only, in test repeats).
        let generation = self.generation   // `stop()` above counted this play
        let first = TrickPlayChoice.index(times: trickFrames.map(\.mediaTime), clock: start, rate: rate, start: start)
        let frame = trickFrames[first]
        let picture: DecodedFrame
        do {
            picture = try await decoder.decode(try await fetcher.bytes(of: frame), from: frame.url)
        } catch {
            throw TrickPlayViewError(view: view, cause: error)
        }
        // Another play or a stop came while this one decoded: that one stands.
        guard generation == self.generation else { return }
        events(.frame(TrickFrame(mediaTime: frame.mediaTime, clock: start, index: first, picture: picture)))
        run = Run(wallStart: .now, mediaStart: start, rate: rate)
        stoppedAt = nil
        task = Task { await self.loop(events, shown: first) }
    }

    /// Counts `stop()`s (every play begins with one): a play that awaited its first frame starts only if no play
    /// or stop came in between.
    private var generation = 0

    /// Ends trick play; returns the media time to resume at (nil if it never ran).
    @discardableResult
    public func stop() -> Double? {
        task?.cancel(); task = nil
        generation += 1
        if run != nil { stoppedAt = clock(); run = nil }
        return stoppedAt
    }

    public var isRunning: Bool { run != nil }

    /// The trick-play clock now: running → start + elapsed × rate (clamped); stopped → where it stopped.
    public var position: Double? { run == nil ? stoppedAt : clock() }

    private func clock() -> Double {
        guard let run else { return stoppedAt ?? 0 }
        let elapsed = ContinuousClock.now - run.wallStart
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return min(max(run.mediaStart + seconds * run.rate, 0), duration)
    }

    private func loop(_ events: @escaping @Sendable (TrickPlayEvent) -> Void, shown first: Int) async {
        var shown = first
        while !Task.isCancelled, let run {
            let now = clock()
            let times = trickFrames.map(\.mediaTime)
            let index = TrickPlayChoice.index(times: times, clock: now, rate: run.rate, start: run.mediaStart)
            if index != shown {
                let frame = trickFrames[index]
                do {
                    let bytes = try await fetcher.bytes(of: frame)
                    let picture = try await decoder.decode(bytes, from: frame.url)
                    if Task.isCancelled { return }
                    events(.frame(TrickFrame(mediaTime: frame.mediaTime, clock: now, index: index, picture: picture)))
                } catch {
                    if Task.isCancelled { return }
                    self.run = nil; stoppedAt = now; task = nil
                    events(.failed(TrickPlayViewError(view: view, cause: error)))
                    return
                }
                shown = index
            }
            let atEnd = run.rate > 0 ? now >= duration : now <= 0
            if atEnd {
                self.run = nil; stoppedAt = now; task = nil
                events(.reachedEnd(position: now))
                return
            }
            // Sleep until the clock crosses the next I-frame boundary (or the end).
            let boundary = TrickPlayChoice.boundary(times: times, shown: index, rate: run.rate, duration: duration)
            let wait = max(abs(boundary - clock()) / abs(run.rate), 0.005)
            try? await Task.sleep(for: .seconds(wait))
        }
    }
}
