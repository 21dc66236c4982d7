import Coordination
import Foundation
import GStreamer
import Multiview
import SyncAnalysis
import SyncBench
import Synchronization
import XCTest

enum Media {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static func path(_ file: String) -> String { root.appendingPathComponent("Media").appendingPathComponent(file).path }
    static let angles = ["angle1-wide.mp4", "angle2-left.webm", "angle3-right.mkv", "angle4-overhead.mp4"].map(path)
}

/// A coordinated set of headless views on one medium, recorded frame by frame.
final class CoordinatedViews: @unchecked Sendable {
    // @unchecked: built once in `make`, then only read.
    let medium: PlaybackCoordinationMedium
    var views: [PlayerCoordination] = []
    let recorder: SyncRecorder

    init(medium: PlaybackCoordinationMedium) {
        self.medium = medium
        recorder = SyncRecorder(clock: medium.clock)
    }

    static func make(_ files: [String], item: String = "event", audio: AudioOutput = .fakeSink) async throws -> CoordinatedViews {
        let set = CoordinatedViews(medium: PlaybackCoordinationMedium())
        for (i, file) in files.enumerated() { try await set.add(file, number: i + 1, item: item, audio: audio) }
        return set
    }

    @discardableResult
    func add(_ file: String, number: Int, item: String?, audio: AudioOutput = .fakeSink) async throws -> PlayerCoordination {
        let source = MediaSource(file)
        let player = try Player(configuration: PlayerConfiguration(
            view: ViewIdentity(number: number, name: source.displayName), video: .fakeSink, audio: audio))
        let coordination = PlayerCoordination(player: player, source: source, itemIdentifier: item)
        try await coordination.coordinate(using: medium)
        try await player.load(source)
        try recorder.attach(player, item: item ?? source.uri)
        views.append(coordination)
        return coordination
    }

    var players: [Player] { views.map(\.player) }

    func statuses() async -> [PlayerStatus] {
        var result: [PlayerStatus] = []
        for p in players { result.append(await p.currentStatus) }
        return result
    }

    /// Skew over frames rendered by every view since `since` (by frame index, timestamps de-quantized).
    func analysis(phases: [PhaseRecord] = []) -> SyncAnalysisResult {
        SyncAnalyzer.analyze(frames: recorder.frames, phases: phases.isEmpty
            ? [PhaseRecord(index: 0, name: "all", commandClockNs: 0, endClockNs: UInt64.max)] : phases,
            fps: 30, mode: "coordinated")
    }
}

/// The source element of a view's playbin3, set from its `source-setup` signal (a streaming thread) and read by the
/// test that holds it to starve the view. A `Mutex` owns it: the signal's thread writes, the test reads.
final class HeldSource: Sendable {
    private let state = Mutex<Element?>(nil)
    func set(_ element: Element?) { state.withLock { $0 = element } }
    var element: Element? { state.withLock { $0 } }
}
