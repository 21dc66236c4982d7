import Coordination
import Foundation
import GStreamer
import Multiview
import Priority
import Synchronization
import TestSupport
import XCTest

/// Soak finding (a), issue 15: in a coordinated group, HLS views whose server went away and came back were
/// reloaded and then replayed through their coordinator — a group seek to where they had been and a group play:
/// the whole group jumped back to the failed view's old position (6 s back in a CLI run) and waited for it, and
/// in the soak the views stayed "waiting for coordinated playback". A reloaded view rejoins the group's time.
final class CoordinatedRecoveryTests: XCTestCase {
    final class Reporter: StageReporter, @unchecked Sendable {
        // Sendable: all access under `lock`.
        private let lock = NSLock()
        private var _status: [String] = [], _notes: [String] = []
        func status(_ line: String) { lock.withLock { _status.append(line) } }
        func note(_ line: String) { lock.withLock { _notes.append(line) } }
        var statusLines: [String] { lock.withLock { _status } }
        var notes: [String] { lock.withLock { _notes } }
    }

    func testRecoveredHLSViewsRejoinWithoutMovingTheGroup() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try HLSFixture.ensure()
        let server = try HLSServer(root: HLSFixture.root, rate: "30M")
        defer { server.stop() }
        var configuration = StageConfiguration(
            sources: [MediaSource(repoRoot.appendingPathComponent("Media/angle1-wide.mp4").path),
                      MediaSource(server.uri("angle1/master.m3u8")), MediaSource(server.uri("angle2/master.m3u8"))],
            headless: true, duration: 40, audio: .fakeSink)
        configuration.coordination = CoordinatedStage(itemIdentifier: "recovery-\(UInt32.random(in: 0...UInt32.max))")
        configuration.observer = PriorityStageObserver(manager: PriorityManager(), initialPriorities: [:])
        configuration.statusInterval = .milliseconds(250)
        let reporter = Reporter()
        let stage = Stage(configuration: configuration, reporter: reporter)
        let (commands, input) = AsyncStream<StageCommand>.makeStream()
        let recoveredFlag = LockedFlag(), outageAt = LockedCount()
        let script = Task.detached { [server, reporter, input, recoveredFlag] in
            await CoordinatedRecoveryTests.outageThenSeek(server: server, reporter: reporter, input: input,
                                                          recoveredFlag: recoveredFlag, outageAt: outageAt)
        }
        _ = await stage.run(commands: commands)
        input.finish()
        script.cancel()
        XCTAssertTrue(recoveredFlag.value, "the HLS views never recovered: \(reporter.notes)")
        XCTAssertTrue(Self.allPlaying(reporter.statusLines.last),
                      "after the recovery: \(reporter.statusLines.suffix(3).joined(separator: "\n"))")
        // No command moved the group after the outage began: the local view never goes back.
        let positions = reporter.statusLines.dropFirst(outageAt.value).compactMap(Self.firstViewPosition)
        for (earlier, later) in zip(positions, positions.dropFirst()) {
            XCTAssertGreaterThan(later, earlier - 0.5, "view 1 went back from \(earlier) s to \(later) s: \(positions)")
        }
    }

    /// Waits for the group to play, seeks it, stops the server until both HLS views failed, starts it again, waits
    /// for both to recover, then quits once every view plays (or after 15 s).
    static func outageThenSeek(server: HLSServer, reporter: Reporter, input: AsyncStream<StageCommand>.Continuation,
                               recoveredFlag: LockedFlag, outageAt: LockedCount) async {
        var playing = false
        for _ in 0..<200 where !playing {
            playing = allPlaying(reporter.statusLines.last)
            if !playing { try? await Task.sleep(for: .milliseconds(100)) }
        }
        guard playing else { return }
        // Played a while and moved (as in the soak): the HLS views have buffered, so the outage stalls them
        // (suspended by their coordinators) before hlsdemux2 gives up.
        try? await Task.sleep(for: .seconds(4))
        input.yield(.seekTo(2))
        try? await Task.sleep(for: .seconds(2))
        outageAt.set(reporter.statusLines.count)
        server.stop()
        // Both HLS views fail (hlsdemux2 gives up) and are retried until the server is back: RETRYING in the status.
        for _ in 0..<200 {
            let views = reporter.statusLines.last?.components(separatedBy: " | ") ?? []
            if views.filter({ $0.contains(" RETRYING") || $0.contains(" FAILED") }).count == 2 { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        try? server.start()
        for _ in 0..<300 {
            if reporter.notes.filter({ $0.contains("recovered") }).count == 2 { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        recoveredFlag.set()
        for _ in 0..<150 {
            if allPlaying(reporter.statusLines.last) { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        input.yield(.quit)
    }

    /// View 1's position in seconds ("1 angle1-wide.mp4 PLAYING 0:00:08.414/0:00:24.000"), nil when not shown.
    static func firstViewPosition(_ line: String) -> Double? {
        guard let first = line.components(separatedBy: " | ").first,
              let time = first.split(separator: " ").first(where: { $0.contains("/") && $0.contains(":") }),
              let position = time.split(separator: "/").first else { return nil }
        let parts = position.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { return nil }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }

    /// Three views, each PLAYING (not waiting) in one status line.
    static func allPlaying(_ line: String?) -> Bool {
        guard let line else { return false }
        let views = line.components(separatedBy: " | ")
        return views.count == 3 && views.allSatisfy { $0.contains(" PLAYING ") && !$0.contains("waiting") }
    }
}

/// A count set from any task. Owner: the Mutex.
final class LockedCount: Sendable {
    private let count = Mutex(0)
    func set(_ value: Int) { count.withLock { $0 = value } }
    var value: Int { count.withLock { $0 } }
}

/// A flag set once from any task. Owner: the Mutex.
final class LockedFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var value: Bool { flag.withLock { $0 } }
}
