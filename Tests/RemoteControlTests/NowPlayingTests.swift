import GStreamer
import RemoteControl
import XCTest

/// `NowPlaying`: the MPRIS2 `Player` properties and `Metadata` it publishes, and which properties a change
/// signals. Pure: no D-Bus.
final class NowPlayingTests: XCTestCase {
    private func playing() -> NowPlaying {
        var now = NowPlaying()
        now.status = .playing
        now.track = .init(trackID: "/org/multiview/track/1", title: "match", length: .seconds(24.5),
                          url: "file:///media/angle1.mp4", views: ["angle1.mp4", "angle2.mp4"])
        now.canSeek = true; now.canPlay = true; now.canPause = true
        return now
    }

    func testMetadataOfATrack() {
        let metadata = playing().metadata
        XCTAssertEqual(metadata["mpris:trackid"], .objectPath("/org/multiview/track/1"))
        XCTAssertEqual(metadata["xesam:title"], .string("match"))
        XCTAssertEqual(metadata["mpris:length"], .int64(24_500_000), "MPRIS lengths are microseconds")
        XCTAssertEqual(metadata["xesam:url"], .string("file:///media/angle1.mp4"))
        XCTAssertEqual(metadata["multiview:views"], .strings(["angle1.mp4", "angle2.mp4"]))
        XCTAssertEqual(metadata.count, 5)
    }

    func testUnknownLengthAndURLAreLeftOut() {
        var now = playing()
        now.track?.length = nil
        now.track?.url = nil
        XCTAssertEqual(Set(now.metadata.keys), ["mpris:trackid", "xesam:title", "multiview:views"])
    }

    func testNoTrackMeansEmptyMetadata() {
        XCTAssertEqual(NowPlaying().metadata, [:])
        XCTAssertEqual(NowPlaying().playerProperties["Metadata"], .dictionary([:]))
    }

    func testPlayerPropertiesAreEveryPropertyButPosition() {
        let properties = playing().playerProperties
        XCTAssertEqual(Set(properties.keys), ["PlaybackStatus", "Rate", "Metadata", "Volume", "MinimumRate",
                                              "MaximumRate", "CanGoNext", "CanGoPrevious", "CanPlay", "CanPause",
                                              "CanSeek", "CanControl"])
        XCTAssertNil(properties["Position"], "read live when asked, never signalled")
        XCTAssertEqual(properties["PlaybackStatus"], .string("Playing"))
        XCTAssertEqual(properties["CanSeek"], .bool(true))
        XCTAssertEqual(properties["CanGoNext"], .bool(false))
        XCTAssertEqual(properties["MinimumRate"], .double(0.125))
        XCTAssertEqual(properties["MaximumRate"], .double(8))
        XCTAssertEqual(NowPlaying().playerProperties["PlaybackStatus"], .string("Stopped"))
    }

    func testNothingChangedSignalsNothing() {
        XCTAssertEqual(playing().changedProperties(since: playing()), [:])
        XCTAssertEqual(NowPlaying().changedProperties(since: NowPlaying()), [:])
    }

    func testOnlyTheChangedPropertiesAreSignalled() {
        let before = playing()
        var paused = before
        paused.status = .paused
        XCTAssertEqual(paused.changedProperties(since: before), ["PlaybackStatus": .string("Paused")])

        var faster = before
        faster.rate = 2
        XCTAssertEqual(faster.changedProperties(since: before), ["Rate": .double(2)])

        var live = before
        live.canSeek = false
        live.track?.length = nil
        let changed = live.changedProperties(since: before)
        XCTAssertEqual(Set(changed.keys), ["CanSeek", "Metadata"])
        XCTAssertEqual(changed["CanSeek"], .bool(false))
        XCTAssertEqual(changed["Metadata"], .dictionary(live.metadata))
    }

    func testClearingTheTrackSignalsEmptyMetadata() {
        var ended = playing()
        ended.track = nil
        ended.status = .stopped
        let changed = ended.changedProperties(since: playing())
        XCTAssertEqual(changed["Metadata"], .dictionary([:]))
        XCTAssertEqual(changed["PlaybackStatus"], .string("Stopped"))
        XCTAssertEqual(Set(changed.keys), ["Metadata", "PlaybackStatus"])
    }
}
