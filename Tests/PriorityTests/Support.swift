import Foundation
import GStreamer
import Multiview
import Priority
import TestSupport
import XCTest

extension HLSFixture {
    /// The rungs of angle N as make-hls wrote them (ascending).
    static func rungs(angle: Int) throws -> [Rung] {
        let text = try String(contentsOfFile: "\(root)/angle\(angle)/master.m3u8", encoding: .utf8)
        return try MasterPlaylist.parse(text).rungs
    }
}

extension TemporaryDirectory {
    /// A web root with out/hls's angles linked in, so a test can add broken or reordered playlists next to them.
    static func hlsWebRoot() throws -> TemporaryDirectory {
        let root = try TemporaryDirectory(prefix: "priority-tests")
        for n in 1...4 {
            try FileManager.default.createSymbolicLink(atPath: root.path("angle\(n)"),
                                                       withDestinationPath: "\(HLSFixture.root)/angle\(n)")
        }
        return root
    }
}

func makePlayer(_ number: Int, name: String? = nil) throws -> Player {
    try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: number, name: name ?? "hls\(number)"),
                                                  video: .fakeSink, audio: .fakeSink))
}

/// Resolution of the frames reaching a player's video sink, "1920x1080", nil before the first.
func shownResolution(_ player: Player) -> String? {
    guard let caps = player.videoSinkCaps(), let s = caps.structure(),
          let w = s.int("width"), let h = s.int("height") else { return nil }
    return "\(w)x\(h)"
}

/// Every distinct resolution a player showed, in order, sampled every 50 ms by a task (stop by cancelling).
final class ResolutionLog: @unchecked Sendable {
    // Sendable: `seen` is only touched under `lock`.
    private let lock = NSLock()
    private var seen: [String] = []
    private var task: Task<Void, Never>?

    init(_ player: Player) {
        task = Task { [weak self] in
            while !Task.isCancelled {
                if let r = shownResolution(player) { self?.record(r) }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }
    deinit { task?.cancel() }
    private func record(_ r: String) { lock.withLock { if seen.last != r { seen.append(r) } } }
    var values: [String] { lock.withLock { seen } }
    func stop() { task?.cancel() }
}

/// Counts stalls (PLAYING → BUFFERING after the view first played) and failures of one player.
final class StallCounter: @unchecked Sendable {
    // Sendable: state only touched under `lock`.
    private let lock = NSLock()
    private var playing = false
    private var hasPlayed = false
    private var _stalls = 0
    private var _failure: PlayerError?
    private var task: Task<Void, Never>?

    init(_ player: Player) async {
        let events = await player.events()
        task = Task { [weak self] in
            for await event in events { self?.handle(event) }
        }
    }
    deinit { task?.cancel() }

    private func handle(_ event: PlayerEvent) {
        lock.withLock {
            switch event {
            case .status(let status):
                if status.state == .playing { hasPlayed = true }
                if status.state == .buffering && hasPlayed && playing { _stalls += 1 }
                playing = status.state == .playing
            case .failed(let error):
                _failure = error
            default:
                break
            }
        }
    }
    var stalls: Int { lock.withLock { _stalls } }
    var failure: PlayerError? { lock.withLock { _failure } }
    var isPlaying: Bool { lock.withLock { playing } }
}
