import Foundation
import GStreamer
import Multiview
@testable import RemoteControl
import TestSupport
import XCTest

/// Uncoordinated views: remote commands act on the focused view only; the end of the item clears now playing.
final class UncoordinatedRemoteTests: PrivateBusTestCase {
    override func setUp() async throws {
        XCTAssertTrue(GStreamer.ensureInitialized())
        try await super.setUp()
    }

    private func makePlayer(_ number: Int, _ file: String) async throws -> Player {
        let source = MediaSource(file)
        let player = try Player(configuration: PlayerConfiguration(view: ViewIdentity(number: number, name: source.displayName)))
        try await player.load(source)
        try await player.play()
        return player
    }

    func testCommandsActOnTheFocusedViewAndTheEndClearsNowPlaying() async throws {
        let server = try await MPRISServer.start()
        let remote = RemoteControl(server: server, skipInterval: 15)
        await remote.start()
        let one = try await makePlayer(1, TestMedia.angle1)
        let two = try await makePlayer(2, TestMedia.angle3)
        await remote.add(one)
        await remote.add(two)

        let playing = try await eventually { try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Playing" }
        XCTAssertTrue(playing)
        // No container title tag in the bundled media: the title is the file name; focus is view 1 first.
        let title = try playerctl(["-p", "multiview", "metadata", "title"], bus: bus).stdout
        XCTAssertEqual(title, "angle1-wide.mp4")

        // Pause acts on view 1 only.
        try playerctl(["-p", "multiview", "pause"], bus: bus)
        let onePaused = await eventually { await one.currentStatus.state == .paused }
        XCTAssertTrue(onePaused)
        let twoState = await two.currentStatus.state
        XCTAssertEqual(twoState, .playing, "the unfocused view must keep playing")

        // Next = skip forward by the preferred interval (15 s) on the focused view.
        let before = await one.position?.seconds ?? 0
        try playerctl(["-p", "multiview", "next"], bus: bus)
        let skipped = await eventually { (await one.position?.seconds ?? 0) > before + 14 }
        XCTAssertTrue(skipped, "Next did not skip 15 s")

        // Focus view 2: now playing describes it (a new item: title, track id), commands go to it.
        await remote.focus(view: 2)
        let retitled = try await eventually {
            try playerctl(["-p", "multiview", "metadata", "--format", "{{title}} {{mpris:trackid}}"], bus: bus).stdout
                == "angle3-right.mkv '/org/mpris/MediaPlayer2/multiview/item2'"
        }
        XCTAssertTrue(retitled, "focus change not published")
        try playerctl(["-p", "multiview", "position", "22.5"], bus: bus)
        // It plays to the end: now playing is cleared, status Stopped.
        let cleared = try await eventually(timeout: .seconds(15)) {
            try playerctl(["-p", "multiview", "status"], bus: bus).stdout == "Stopped"
        }
        XCTAssertTrue(cleared, "end of item did not report Stopped")
        let metadata = try playerctl(["-p", "multiview", "metadata"], bus: bus)
        XCTAssertTrue(metadata.stdout.isEmpty, "metadata not cleared: \(metadata.stdout)")
        let oneState = await one.currentStatus.state
        XCTAssertEqual(oneState, .paused, "view 1 must be untouched by commands to view 2")

        await remote.shutdown()
        await one.stop()
        await two.stop()
    }
}
