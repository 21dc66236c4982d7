import Foundation
import GStreamer
import Multiview
import Synchronization
import TestSupport
import XCTest
@testable import Routing

/// A lost PulseAudio stream is replaced inside the view's audio sink bin: only the bin's leaf sink changes (the
/// dead pulsesink out, a fake sink in; on the server's return the fake sink out, a new pulsesink in). Before,
/// every replacement took the pipeline to NULL and built it again: each kill left the process ~15 MB larger (4
/// coordinated views, 6 kills: RSS 166 → 257 MB; in place: 167 → 176 MB, flat after the third) and the teardown
/// while a pipeline was still starting hit GStreamer 1.22 bugs (a typefind deadlock, an adaptivedemux2 abort).
/// Real pipeline, the test's own daemon, killed and started again.
final class AudioOutputSwapInPlaceTests: XCTestCase {
    func testAKilledDaemonChangesOnlyTheAudioSinkAndTheViewPlaysOnWithItsStreamBack() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await withPulseKillFixture { fixture in
            let daemon = fixture.daemon, log = fixture.audioEvents
            let file = "angle1-wide.mp4"
            let player = try await fixture.player(number: 1, file: file)
            try await player.load(MediaSource(RoutingMedia.path(file)))
            try await player.play()
            let playing = await eventually(timeout: .seconds(15)) { (await player.position?.seconds ?? 0) > 0.5 }
            XCTAssertTrue(playing, "the view did not play")

            // From now on, every element that leaves the pipeline (at any depth) is noted by factory.
            let removed = Mutex<[String]>([])
            let watch = try player.watchElements(added: { _ in }, removed: { element in
                removed.withLock { $0.append(element.factoryName ?? element.name) }
            })
            defer { _ = watch }

            daemon.stop()   // SIGKILL
            let lost = await eventually(timeout: .seconds(10)) { await log.values.first == true }
            XCTAssertTrue(lost, "the view never reported the loss of its stream")
            try await daemon.start()
            let back = await eventually(timeout: .seconds(15)) {
                let state = await player.currentStatus.state
                return await log.values.last == false && state == .playing
            }
            let events = await log.values, status = await player.currentStatus, failure = await player.failure
            XCTAssertTrue(back, "the view did not get its stream back and play: events \(events), \(status), "
                          + "failure \(failure.map { "\($0)" } ?? "-")")
            let client = try await PulseAudioClient.connect(server: daemon.server)
            let streaming = await eventually { ((try? await client.sinkInputs().count) ?? 0) == 1 }
            XCTAssertTrue(streaming, "the view's new stream is not on the restarted daemon")
            let before = await player.position?.seconds ?? 0
            let advancing = await eventually(timeout: .seconds(5)) { (await player.position?.seconds ?? 0) > before + 0.5 }
            XCTAssertTrue(advancing, "the view does not advance after its stream came back (at \(before) s)")

            // Only the outputs were exchanged: the lost pulsesink and, on the return, the fake sink. No demuxer,
            // decoder, queue or source left the pipeline (they do when it goes to NULL).
            let left = removed.withLock { $0 }
            XCTAssertEqual(left.sorted(), ["fakesink", "pulsesink"],
                           "elements that left the pipeline during the loss and the return: \(left)")
        }
    }
}
