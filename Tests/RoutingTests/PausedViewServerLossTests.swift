import Foundation
import GStreamer
import Multiview
import TestSupport
import Synchronization
import XCTest
@testable import Routing

/// PulseAudio dies and returns while one view plays and another is paused (uncoordinated: the user paused it).
/// The paused view's sink writes nothing, so nothing tells it its stream died; it keeps its connection to the dead
/// daemon open. pulsesink shares one connection per client name in a process, so the playing view's new stream
/// must not be made on that dead connection: it gets its stream back on the new daemon while the other stays paused,
/// and the paused view plays with a stream of its own once played. Real pipelines, the test's own daemon.
final class PausedViewServerLossTests: XCTestCase {
    func testAPlayingViewGetsItsStreamBackWhileAnotherViewIsPausedOnTheDeadServer() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let daemon = fixture.daemon
            let playing = try await fixture.player(number: 1, file: "angle1-wide.mp4")
            let paused = try await fixture.player(number: 2, file: "angle4-overhead.mp4")
            // The paused view's statuses and audio events in order, for the failure messages.
            let pausedLog = StatusLog()
            let pausedEvents = await paused.events()
            let reader = Task {
                for await event in pausedEvents {
                    switch event {
                    case .status(let s): await pausedLog.add("\(s.state)")
                    case .audioOutput(let lost, let reason): await pausedLog.add(lost ? "lost (\(reason))" : "back")
                    default: break
                    }
                }
            }
            defer { reader.cancel() }
            try await playing.load(MediaSource(RoutingMedia.path("angle1-wide.mp4")))
            try await paused.load(MediaSource(RoutingMedia.path("angle4-overhead.mp4")))
            try await playing.playLocally()
            try await paused.playLocally()
            let client = try await PulseAudioClient.connect(server: daemon.server)
            let streaming = await eventually(timeout: .seconds(15)) { ((try? await client.sinkInputs().count) ?? 0) == 2 }
            XCTAssertTrue(streaming, "both views' streams play on the private daemon")
            try await paused.pauseLocally()

            daemon.stop()   // SIGKILL
            let lost = await eventually(timeout: .seconds(10)) { await playing.audioOutputLost }
            XCTAssertTrue(lost, "the playing view reports the loss of its audio output")
            try await Task.sleep(for: .seconds(1))
            try await daemon.start()
            let client2 = try await PulseAudioClient.connect(server: daemon.server)
            // The streams the new daemon had at the last look, for the failure message: one run of test-repeat
            // (0e09345, run 3) saw the playing view's "back" event and not exactly one stream for 15 s, and the
            // message could not tell none from two.
            let lastStreams = LockedStreams()
            let back = await eventually(timeout: .seconds(15)) {
                let inputs = (try? await client2.sinkInputs()) ?? []
                lastStreams.set(inputs.map { "\($0.name) corked=\($0.corked)" })
                guard await !playing.audioOutputLost else { return false }
                return inputs.count == 1
            }
            let events = await fixture.audioEvents.values
            let pausedState = await paused.currentStatus.state
            let pausedSoFar = await pausedLog.values
            XCTAssertTrue(back, "the playing view's stream is back on the new daemon (audio events \(events); the new"
                          + " daemon's streams at the last look: \(lastStreams.value); the paused view's statuses and"
                          + " audio events: \(pausedSoFar))")
            XCTAssertEqual(pausedState, .paused, "the other view stays paused")
            let failed = await playing.failure
            XCTAssertNil(failed, "the playing view did not fail")

            // Played again, the paused view finds its stream dead, and plays on with a new one.
            try await paused.playLocally()
            // The states are waited for with the streams: one repeat run (on 200d1c5, under the shards' load) read
            // [PLAYING, PAUSED] at the moment both streams were back. A view left paused still fails here, after
            // 15 s, with its history.
            let bothBack = await eventually(timeout: .seconds(15)) {
                guard await !paused.audioOutputLost else { return false }
                guard await paused.currentStatus.state == .playing, await playing.currentStatus.state == .playing
                else { return false }
                return ((try? await client2.sinkInputs().count) ?? 0) == 2
            }
            let states = [await playing.currentStatus.state, await paused.currentStatus.state]
            let allEvents = await fixture.audioEvents.values
            let stillLost = await paused.audioOutputLost
            let pausedHistory = await pausedLog.values
            XCTAssertTrue(bothBack, "both views play, with their streams on the new daemon, once the paused view plays "
                          + "(states \(states), lost \(stillLost), audio events \(allEvents); "
                          + "the paused view's statuses and audio events: \(pausedHistory))")
            XCTAssertEqual(states, [.playing, .playing])
        }
    }
}

/// The last list of streams a polling closure saw (written from the closure, read after it).
private final class LockedStreams: Sendable {
    private let streams = Mutex<[String]>([])
    func set(_ value: [String]) { streams.withLock { $0 = value } }
    var value: [String] { streams.withLock { $0 } }
}
