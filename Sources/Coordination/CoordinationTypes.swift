import Foundation
import GStreamer

/// Identifies one participant (one coordinator) of a coordination medium.
public struct ParticipantID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (a: ParticipantID, b: ParticipantID) -> Bool { a.rawValue < b.rawValue }
}

/// Why a participant is (temporarily) detached from its group (AVCoordinatedPlaybackSuspension.Reason).
public struct SuspensionReason: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The view's audio output was interrupted (PulseAudio corked its stream).
    public static let audioSessionInterrupted = SuspensionReason("audioSessionInterrupted")
    /// The view ran out of data (buffering below 100 %).
    public static let stallRecovery = SuspensionReason("stallRecovery")
    /// The user is scrubbing on this view; the new time is shared on release (`end(proposingNewTime:)`).
    public static let userIsChangingCurrentTime = SuspensionReason("userIsChangingCurrentTime")
    /// The view plays something else for a while (an ad of its own).
    public static let playingInterstitial = SuspensionReason("playingInterstitial")
    /// The user asked "what happened?" on this view: it replays the last seconds and catches up.
    public static let whatHappened = SuspensionReason("whatHappened")
    /// The view was reloaded (its server came back): for a moment, so that the group catches it up again.
    public static let reloaded = SuspensionReason("reloaded")
    /// Set by the medium, not the participant: it was not ready when the group stopped waiting for it, so the
    /// group went on without it; it rejoins once the medium has caught it up (`ReadinessPolicy`).
    public static let coordinatedPlaybackNotPossible = SuspensionReason("coordinatedPlaybackNotPossible")
}

/// Group state for one item: rate, playing or not, and the anchor — media time `anchorMedia` is rendered at
/// clock time `anchorClock` — so every connected pipeline renders M + rate·(t − C) at clock time t.
public struct GroupState: Sendable, Equatable, CustomStringConvertible {
    public var itemIdentifier: String
    public var rate: Double
    public var isPlaying: Bool
    public var anchorMedia: ClockTime
    /// nil while paused (the anchor is then just a media time).
    public var anchorClock: ClockTime?

    public init(itemIdentifier: String, rate: Double, isPlaying: Bool, anchorMedia: ClockTime, anchorClock: ClockTime?) {
        self.itemIdentifier = itemIdentifier
        self.rate = rate
        self.isPlaying = isPlaying
        self.anchorMedia = anchorMedia
        self.anchorClock = anchorClock
    }

    /// The group's media time at clock time `t`.
    public func mediaTime(at t: ClockTime) -> ClockTime {
        guard isPlaying, let c = anchorClock else { return anchorMedia }
        let elapsed = Double(Int64(bitPattern: t.nanoseconds &- c.nanoseconds)) * rate
        return ClockTime(nanoseconds: UInt64(max(0, Double(anchorMedia.nanoseconds) + elapsed)))
    }

    /// The clock time at which media time `m` is (or was) rendered; nil while paused.
    public func clockTime(forMedia m: ClockTime) -> ClockTime? {
        guard isPlaying, let c = anchorClock, rate > 0 else { return nil }
        let delta = (Double(m.nanoseconds) - Double(anchorMedia.nanoseconds)) / rate
        return ClockTime(nanoseconds: UInt64(max(0, Double(c.nanoseconds) + delta)))
    }

    public var description: String {
        "\(itemIdentifier) \(isPlaying ? "playing" : "paused") ×\(rate) at \(anchorMedia)" +
            (anchorClock.map { " @clock \($0)" } ?? "")
    }
}

/// What a transport command asks of the group.
public enum GroupIntent: Sendable, Equatable {
    case play(rate: Double)
    case pause
    case seek(to: ClockTime)
    case seekBy(seconds: Double)
    case rate(Double)
    /// Start now without waiting for the others (they join as soon as they can; they may miss content).
    case playImmediately(rate: Double)
}

/// Why `coordinate(using:)` or a group command failed.
public enum CoordinationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The coordinator is connected to another medium already.
    case alreadyConnected(to: String)
    /// The same participant id is already connected to this medium.
    case duplicateParticipant(ParticipantID)
    /// The playback object cannot run on the medium's clock.
    case clockRejected(ClockRejection)
    case notConnected
    /// A participant could not get ready in time for a coordinated start.
    case participantNotReady(ParticipantID, NotReadyReason)
    /// The command was superseded by a newer one before it completed (newest command wins).
    case superseded
    /// "Play at C" reached the participant after C: it did not start (it would render late), and must be
    /// prepared again further ahead.
    case missedStartInstant

    public var description: String {
        switch self {
        case .alreadyConnected(let m): return "already coordinated through medium \(m)"
        case .duplicateParticipant(let id): return "participant \(id) is already connected"
        case .clockRejected(let why): return "cannot use the coordination clock: \(why)"
        case .notConnected: return "not connected to a coordination medium"
        case .participantNotReady(let id, let why): return "participant \(id) not ready: \(why)"
        case .superseded: return "superseded by a newer command"
        case .missedStartInstant: return "the start instant had passed when the start command arrived"
        }
    }
}

/// Why a playback object cannot run on the medium's clock.
public enum ClockRejection: Sendable, Equatable, CustomStringConvertible {
    /// A live pipeline that must keep its own clock (a capture device's).
    case mustKeepOwnClock
    public var description: String {
        switch self {
        case .mustKeepOwnClock: return "the pipeline must keep its own clock"
        }
    }
}

/// Why a participant was not ready for a coordinated start.
public enum NotReadyReason: Sendable, Equatable, CustomStringConvertible {
    /// It was not ready within the medium's ready timeout.
    case timedOut(after: Duration)
    /// `playImmediately`: every start instant it was given had passed by the time it got it.
    case missedEveryStartInstant(attempts: Int)
    /// It could not get onto the group's running timeline: every aim was overtaken while it prepared.
    case couldNotCatchUp(attempts: Int)
    /// Its playback object failed the command.
    case failed(TargetFailure)

    public var description: String {
        switch self {
        case .timedOut(let limit): return "not ready within \(limit)"
        case .missedEveryStartInstant(let n): return "missed all \(n) start instants"
        case .couldNotCatchUp(let n): return "could not catch up with the group in \(n) attempts"
        case .failed(let failure): return "\(failure)"
        }
    }
}

/// The error a participant's playback object threw, kept as it is (typed, not flattened to text). Two are equal
/// when they are the same value as far as reflection shows (their type and fields): enough for tests, which
/// compare whole `CoordinationError`s.
public struct TargetFailure: Sendable, Equatable, CustomStringConvertible {
    public let error: any Error
    public init(_ error: any Error) { self.error = error }
    public var description: String { "\(error)" }
    public static func == (a: TargetFailure, b: TargetFailure) -> Bool {
        type(of: a.error) == type(of: b.error) && String(reflecting: a.error) == String(reflecting: b.error)
    }
}

/// What the group did, told to every coordinator, saying who caused it.
public enum CoordinatorEvent: Sendable, Equatable {
    case rateChanged(rate: Double, originator: ParticipantID?, byOtherParticipant: Bool)
    case timeJumped(to: ClockTime, originator: ParticipantID?, byOtherParticipant: Bool)
    case suspensionBegan(SuspensionReason)
    case suspensionEnded(SuspensionReason)
    /// The participant (re)joined the group's timeline and is aligned.
    case joined(GroupState)
    case participantsChanged([ParticipantInfo])
}

/// One participant as the others see it (AVPlaybackCoordinator.otherParticipants).
public struct ParticipantInfo: Sendable, Equatable, Identifiable {
    public var id: ParticipantID
    public var itemIdentifier: String?
    /// Prepared for (or playing on) the group's current timeline.
    public var isReady: Bool
    public var suspensionReasons: [SuspensionReason]
}

/// A command delivered to the playback object behind a coordinator (the delegate of a delegating
/// coordinator, or our player). It carries the item it is meant for and who asked for it.
public struct DelegatedCommand: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Get ready to render `itemTime` at `rate` (seek and preroll), and report readiness by returning.
        /// May be sent although local data is ready, because someone else is not: show "waiting".
        case buffer(itemTime: ClockTime, rate: Double)
        /// Start: render the prepared `itemTime` at clock time `atClockTime` on the medium's clock, at `rate`.
        case play(itemTime: ClockTime, rate: Double, atClockTime: ClockTime)
        /// Stop at `itemTime` (and show that frame).
        case pause(itemTime: ClockTime)
    }
    public var kind: Kind
    public var expectedItemIdentifier: String
    public var originator: ParticipantID?
}
