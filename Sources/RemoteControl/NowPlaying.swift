import Foundation
import GStreamer

/// A D-Bus value as MPRIS needs it. Pure Swift (testable without a bus); `GVariantBuilding` turns it into a
/// GVariant on the D-Bus loop thread.
public indirect enum DBusValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case double(Double)
    case int64(Int64)
    case objectPath(String)
    case strings([String])
    /// `a{sv}` (MPRIS metadata).
    case dictionary([String: DBusValue])
}

/// A command a remote (playerctl, a desktop media widget, media keys) sent over MPRIS2.
public enum RemoteCommand: Sendable, Equatable {
    case play
    case pause
    case playPause
    case stop
    /// MPRIS `Next` / `Previous`: skip forward / back by the preferred skip interval.
    case next
    case previous
    /// MPRIS `Seek(x Offset)`: relative, in microseconds — the offset the command carries is the one used.
    case seek(offsetMicroseconds: Int64)
    /// MPRIS `SetPosition(o TrackId, x Position)`: absolute, ignored when the track id is not the current one.
    case setPosition(trackID: String, microseconds: Int64)
    /// The `Rate` property was written (0 means pause, as the specification says).
    case rate(Double)
    /// The `Volume` property was written (linear, 1.0 = the media's level; negative values arrive as 0).
    case volume(Double)
    case quit
    case raise
}

/// What is published as "now playing": the MPRIS2 `Player` properties other than `Position` (which is read live
/// from the focused pipeline when asked and never signalled — clients extrapolate it from `Rate`).
public struct NowPlaying: Sendable, Equatable {
    public enum Status: String, Sendable { case playing = "Playing", paused = "Paused", stopped = "Stopped" }

    public struct Track: Sendable, Equatable {
        /// MPRIS track id (a D-Bus object path), unique per item played.
        public var trackID: String
        public var title: String
        public var length: ClockTime?
        public var url: String?
        /// The views' names ("angle1-wide.mp4", …), published as `multiview:views`.
        public var views: [String]
        public init(trackID: String, title: String, length: ClockTime?, url: String?, views: [String]) {
            self.trackID = trackID; self.title = title; self.length = length; self.url = url; self.views = views
        }
    }

    public var status: Status = .stopped
    public var rate: Double = 1.0
    /// nil: nothing playing (cleared at the end).
    public var track: Track?
    /// False for content that cannot seek (a live stream): the command stays, disabled.
    public var canSeek = false
    public var canPlay = false
    public var canPause = false
    public var canGoNext = false
    public var canGoPrevious = false
    public var minimumRate = 0.125
    public var maximumRate = 8.0
    /// The group's volume as the remote last set it (linear); stdin's `volume` does not change it.
    public var volume = 1.0

    public init() {}

    public static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"

    /// `Metadata` as `a{sv}`: empty when cleared.
    public var metadata: [String: DBusValue] {
        guard let track else { return [:] }
        var m: [String: DBusValue] = [
            "mpris:trackid": .objectPath(track.trackID),
            "xesam:title": .string(track.title),
            "multiview:views": .strings(track.views),
        ]
        if let length = track.length { m["mpris:length"] = .int64(Int64(length.nanoseconds / 1000)) }
        if let url = track.url { m["xesam:url"] = .string(url) }
        return m
    }

    /// Every `org.mpris.MediaPlayer2.Player` property except `Position`.
    public var playerProperties: [String: DBusValue] {
        [
            "PlaybackStatus": .string(status.rawValue),
            "Rate": .double(rate),
            "Metadata": .dictionary(metadata),
            "Volume": .double(volume),
            "MinimumRate": .double(minimumRate),
            "MaximumRate": .double(maximumRate),
            "CanGoNext": .bool(canGoNext),
            "CanGoPrevious": .bool(canGoPrevious),
            "CanPlay": .bool(canPlay),
            "CanPause": .bool(canPause),
            "CanSeek": .bool(canSeek),
            "CanControl": .bool(true),
        ]
    }

    /// The properties whose value differs from `old` (what a PropertiesChanged signal carries).
    public func changedProperties(since old: NowPlaying) -> [String: DBusValue] {
        let before = old.playerProperties
        return playerProperties.filter { before[$0.key] != $0.value }
    }
}
