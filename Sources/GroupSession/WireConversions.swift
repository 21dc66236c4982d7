import Coordination
import GStreamer
import GroupProtocol

/// Coordination values ⇄ their wire form (times as nanoseconds on the host's clock).
extension WireGroupState {
    init(_ state: GroupState) {
        self.init(item: state.itemIdentifier, rate: state.rate, playing: state.isPlaying,
                  anchorMediaNs: state.anchorMedia.nanoseconds, anchorClockNs: state.anchorClock?.nanoseconds)
    }
    var groupState: GroupState {
        GroupState(itemIdentifier: item, rate: rate, isPlaying: playing, anchorMedia: ClockTime(nanoseconds: anchorMediaNs),
                   anchorClock: anchorClockNs.map { ClockTime(nanoseconds: $0) })
    }
}

extension WireIntent {
    init(_ intent: GroupIntent) {
        switch intent {
        case .play(let rate): self = .play(rate: rate)
        case .pause: self = .pause
        case .seek(let time): self = .seek(toNs: time.nanoseconds)
        case .seekBy(let seconds): self = .seekBy(seconds: seconds)
        case .rate(let rate): self = .rate(rate)
        case .playImmediately(let rate): self = .playImmediately(rate: rate)
        }
    }
    var intent: GroupIntent {
        switch self {
        case .play(let rate): return .play(rate: rate)
        case .pause: return .pause
        case .seek(let ns): return .seek(to: ClockTime(nanoseconds: ns))
        case .seekBy(let seconds): return .seekBy(seconds: seconds)
        case .rate(let rate): return .rate(rate)
        case .playImmediately(let rate): return .playImmediately(rate: rate)
        }
    }
}

extension WireParticipant {
    init(_ info: ParticipantInfo) {
        self.init(id: info.id.rawValue, item: info.itemIdentifier, ready: info.isReady,
                  suspensions: info.suspensionReasons.map(\.rawValue))
    }
    var info: ParticipantInfo {
        ParticipantInfo.remote(id: ParticipantID(id), itemIdentifier: item, isReady: ready,
                               suspensionReasons: suspensions.map(SuspensionReason.init))
    }
}

/// Why a remote view could not carry out the host's command (what the member answered).
public enum RemoteViewError: Error, Sendable, Equatable, CustomStringConvertible {
    case failed(participant: String, String)
    case memberGone(participant: String)
    public var description: String {
        switch self {
        case .failed(let id, let why): return "\(id): \(why)"
        case .memberGone(let id): return "\(id): its member left or was dropped"
        }
    }
}

/// Why the member's request to the host failed.
public enum GroupLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    case refused(WireErrorCode, String)
    case failed(String)
    case hostGone
    case notWelcomed
    public var description: String {
        switch self {
        case .refused(let code, let detail): return "host refused (\(code.rawValue)): \(detail)"
        case .failed(let why): return "host: \(why)"
        case .hostGone: return "the session host is gone"
        case .notWelcomed: return "no welcome from the host"
        }
    }
}

extension WireOutcome {
    init(_ result: Result<Void, any Error>) {
        switch result {
        case .success: self = .ok
        case .failure(CoordinationError.missedStartInstant): self = .missedStart
        case .failure(let error): self = .failed("\(error)")
        }
    }
}
