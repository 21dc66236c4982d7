import Foundation
import GStreamer

/// One aim of a catch-up as it went: when it aimed (on the pipelines' clock), how far ahead, at which media time,
/// how long preparing there took and what came of it. The medium keeps the last few (`catchUpAims`) so that a
/// view slow to rejoin can be explained from the outside (tests print them in their failure messages).
public struct CatchUpAim: Sendable, Equatable, CustomStringConvertible {
    public enum Outcome: Sendable, Equatable {
        /// Prepared in time: started at this clock time (the group reaches the prepared media time then).
        case started(at: ClockTime)
        /// Prepared too late: the group had passed the prepared time (or was within the minimum start lead of
        /// it) by this much.
        case tooLate(by: Duration)
        /// A command moved the group while it prepared.
        case groupMoved
        /// "Play at" arrived after the instant.
        case missedStart
        /// The group was paused: prepared and paused at its time.
        case joinedPaused
        /// The preparation failed (the error went to the caller).
        case failed
    }

    public var participant: ParticipantID
    /// The pipelines' clock when it aimed.
    public var aimedAt: ClockTime
    /// How far ahead of `aimedAt` it aimed (zero for a paused group).
    public var lead: Duration
    /// The media time it prepared at.
    public var media: ClockTime
    /// How long preparing took (nil while it prepares).
    public var took: Duration?
    public var outcome: Outcome?

    public init(participant: ParticipantID, aimedAt: ClockTime, lead: Duration, media: ClockTime) {
        self.participant = participant
        self.aimedAt = aimedAt
        self.lead = lead
        self.media = media
    }

    public var description: String {
        var text = "\(participant) aimed at \(media) with a lead of \(Self.seconds(lead)) at clock \(aimedAt)"
        if let took { text += ", prepared in \(Self.seconds(took))" }
        switch outcome {
        case .started(let at):
            let waited = at.seconds - aimedAt.seconds - (took ?? .zero).inSeconds
            text += ": started at \(at) (waited " + String(format: "%.3f s", waited) + " prepared)"
        case .tooLate(let by): text += ": too late by \(Self.seconds(by))"
        case .groupMoved: text += ": the group moved meanwhile"
        case .missedStart: text += ": \"play at\" came after the instant"
        case .joinedPaused: text += ": joined the paused group"
        case .failed: text += ": failed"
        case nil: text += " (preparing)"
        }
        return text
    }

    private static func seconds(_ d: Duration) -> String { String(format: "%.3f s", d.inSeconds) }
}
