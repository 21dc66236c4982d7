import XCTest
@testable import Multiview

/// What a view's status line says: `PlayerStatus` with its "waiting to play" reason, and `ViewMediaInfo`'s
/// resolution text. Pure.
final class PlayerStatusTests: XCTestCase {
    func testStatesReadAsGstPlayNamesThem() {
        XCTAssertEqual(PlayerStatus(state: .playing).description, "PLAYING")
        XCTAssertEqual(PlayerStatus(state: .stopped).description, "STOPPED")
        XCTAssertEqual(PlaybackState(rawValue: "BUFFERING"), .buffering)
        XCTAssertNil(PlaybackState(rawValue: "playing"), "the names are upper case")
    }

    func testTheWaitingReasonFollowsTheState() {
        XCTAssertEqual(PlayerStatus(state: .paused, waitingToPlay: .loading).description, "PAUSED (waiting: loading)")
        XCTAssertEqual(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 40)).description,
                       "BUFFERING (waiting: buffering 40%)")
        XCTAssertEqual(PlayerStatus(state: .paused, waitingToPlay: .seeking).description, "PAUSED (waiting: seeking)")
        XCTAssertEqual(PlayerStatus(state: .paused, waitingToPlay: .waitingForCoordinatedPlayback).description,
                       "PAUSED (waiting: waiting for coordinated playback)")
    }

    func testStatusesDifferByTheirReason() {
        XCTAssertNotEqual(PlayerStatus(state: .paused), PlayerStatus(state: .paused, waitingToPlay: .loading))
        XCTAssertNotEqual(PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 10)),
                          PlayerStatus(state: .buffering, waitingToPlay: .buffering(percent: 20)))
        XCTAssertEqual(PlayerStatus(state: .playing, waitingToPlay: nil), PlayerStatus(state: .playing))
    }

    func testResolutionText() {
        var info = ViewMediaInfo()
        XCTAssertEqual(info.resolutionText, "no streams")
        XCTAssertFalse(info.hasVideo)
        info.audioCodec = "MPEG-4 AAC"
        XCTAssertEqual(info.resolutionText, "audio only")
        info.width = 640
        XCTAssertEqual(info.resolutionText, "audio only", "a width without a height is no size")
        XCTAssertTrue(info.hasVideo)
        info.height = 360
        XCTAssertEqual(info.resolutionText, "640x360")
    }
}
