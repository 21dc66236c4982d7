import Foundation
import GStreamer
import Multiview

/// The stage's trick-play layer (`ff N`, `rew N`, `preview N T PATH`): one `TrickPlayer` per HLS view, made on
/// first use from the view's master playlist. While trick play runs the view's own player is paused; the I-frames
/// are drawn into the view's tile (window mode) by a small display pipeline, and a transport command ends it
/// (the stage then seeks the player to `stop(view:)`'s position).
///
/// Owner: this actor owns the per-view trick players and which views are in trick play; the frame log and the
/// displays are touched from the trick players' callbacks and guard themselves (a lock; appsrc is MT-safe).
public actor TrickPlayStage: StageTrickPlay {
    private var trickPlayers: [Int: TrickPlayer] = [:]
    private var active: Set<Int> = []
    private var displays: [Int: TrickDisplay] = [:]
    private let note: @Sendable (String) -> Void
    /// Media times of the I-frames shown per view, in order (what the status and tests look at).
    public nonisolated let shown = ShownLog()

    /// - Parameter note: where asynchronous notes go (trick play reached the end, an I-frame failed).
    public init(note: @escaping @Sendable (String) -> Void = { _ in }) { self.note = note }

    private func trickPlayer(_ player: Player, source: MediaSource) -> TrickPlayer? {
        let number = player.view.number
        if let existing = trickPlayers[number] { return existing }
        guard let url = URL(string: source.uri), url.scheme == "http" || url.scheme == "https" || url.isFileURL,
              url.pathExtension.lowercased() == "m3u8" else { return nil }
        // The rung that fits the tile; headless (nothing shown): the smallest.
        let height: Int
        if case .window(let target) = player.configuration.video { height = target.height } else { height = 0 }
        let trick = TrickPlayer(view: "\(number)", master: url, viewHeight: height)
        trickPlayers[number] = trick
        return trick
    }

    public func start(_ player: Player, source: MediaSource, rate: Double, from position: Double) async -> StageTrickPlayStart {
        let number = player.view.number
        guard let trick = trickPlayer(player, source: source) else {
            return .refused("view \(number): trick play needs an HLS master playlist (…/master.m3u8), not \(source.uri)")
        }
        let display: TrickDisplay?
        if case .window(let target) = player.configuration.video {
            display = displays[number] ?? TrickDisplay(handle: target.handle)
            displays[number] = display
        } else {
            display = nil
        }
        let log = shown, note = self.note
        log.reset(number)
        do {
            try await trick.play(rate: rate, from: position) { event in
                switch event {
                case .frame(let frame):
                    log.append(number, frame.mediaTime)
                    display?.show(frame.picture)
                case .reachedEnd(let at):
                    note("view \(number): trick play reached the \(rate > 0 ? "end" : "start") (\(String(format: "%.1f", at)) s)")
                case .failed(let error):
                    note("\(error)")
                }
            }
        } catch {
            return .refused("\(error)")
        }
        active.insert(number)
        let variant = await trick.trickVariant
        let size = variant.map { "\($0.width ?? 0)x\($0.height ?? 0)" } ?? "?"
        return .started("view \(number): trick play \(rate > 0 ? "ff" : "rew") \(Int(abs(rate)))x from \(String(format: "%.1f", position)) s (I-frames \(size))")
    }

    public func stop(view number: Int) async -> Double? {
        guard active.remove(number) != nil, let trick = trickPlayers[number] else { return nil }
        let position = await trick.stop()   // after this no frame callback runs (same actor as the loop)
        displays[number]?.close()           // the view's own sink draws the tile again
        return position
    }

    /// Whether view N is in trick play now.
    public func isActive(_ number: Int) -> Bool { active.contains(number) }

    public func preview(_ player: Player, source: MediaSource, seconds: Double, path: String) async -> String {
        let number = player.view.number
        guard let trick = trickPlayer(player, source: source) else {
            return "view \(number): previews need an HLS master playlist (…/master.m3u8), not \(source.uri)"
        }
        do {
            let frame = try await trick.preview(at: seconds)
            try await frame.encoded(forPath: path, view: "\(number)").write(to: URL(fileURLWithPath: path))
            return "view \(number): preview at \(String(format: "%.1f", seconds)) s -> \(path) (\(frame.width)x\(frame.height))"
        } catch {
            return "\(error)"
        }
    }
}

/// I-frame media times shown per view. Sendable: all state under `lock` (appended from trick players' tasks).
public final class ShownLog: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Int: [Double]] = [:]
    func reset(_ view: Int) { lock.withLock { times[view] = [] } }
    func append(_ view: Int, _ time: Double) { lock.withLock { times[view, default: []].append(time) } }
    public func times(ofView view: Int) -> [Double] { lock.withLock { times[view] ?? [] } }
}

/// Draws trick-play I-frames into a view's tile: `appsrc ! videoconvert ! videoscale ! ximagesink` on the tile's
/// X window. Made on the first frame (the caps come from its size).
///
/// Sendable: `pipeline`/`source` are written once under `lock`; pushing into appsrc is MT-safe.
final class TrickDisplay: @unchecked Sendable {
    private let handle: UInt
    private let lock = NSLock()
    private var pipeline: Pipeline?
    private var size: (Int, Int)?

    init(handle: UInt) { self.handle = handle }

    func show(_ frame: DecodedFrame) {
        lock.withLock {
            if size.map({ $0 != (frame.width, frame.height) }) ?? true {
                pipeline = try? make(width: frame.width, height: frame.height)
                size = (frame.width, frame.height)
            }
            guard let pipeline, let source = pipeline.child(named: "src") else { return }
            IFrameDecoder.push(frame.rgb, into: source)
        }
    }

    /// Tears the display pipeline down (the next `show` makes a new one).
    func close() { lock.withLock { pipeline = nil; size = nil } }

    private func make(width: Int, height: Int) throws -> Pipeline {
        let pipeline = try Pipeline.parseLaunch("""
            appsrc name=src format=time do-timestamp=true \
            caps=video/x-raw,format=RGB,width=\(width),height=\(height),framerate=0/1 \
            ! videoconvert ! videoscale ! ximagesink name=sink sync=false force-aspect-ratio=true
            """)
        try pipeline.child(named: "sink")?.setWindowHandle(handle)
        _ = try pipeline.setState(.playing)
        return pipeline
    }
}

extension DecodedFrame {
    /// PPM for a `.ppm` path, else PNG (GStreamer's pngenc, off the cooperative threads).
    public func encoded(forPath path: String, view: String) async throws(TrickPlayViewError) -> Data {
        if path.lowercased().hasSuffix(".ppm") { return ppm }
        do {
            return try await PNGEncoding.encode(rgb: rgb, width: width, height: height)
        } catch {
            throw TrickPlayViewError(view: view, cause: .encode(path: path, reason: "\(error)"))
        }
    }
}
