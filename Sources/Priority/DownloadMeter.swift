import Foundation
import Synchronization

/// Collects chunk arrivals from every view's demuxer threads (`Player.watchDownloadedBytes`), stamped when they
/// arrive, until the manager drains them into its `SharedLinkEstimator`.
/// Threading: the Mutex owns the pending arrivals; `record` runs on streaming threads and only appends.
final class DownloadMeter: Sendable {
    struct Arrival: Sendable, Equatable {
        /// The estimator's stream key (`key(view:stream:)`).
        var stream: Int
        var bytes: Int
        /// Since the meter's epoch.
        var time: Duration
    }
    private let epoch = ContinuousClock.now
    private let pending = Mutex<[Arrival]>([])

    /// Now on the meter's timeline (what the estimator's `update(now:)` gets).
    var now: Duration { ContinuousClock.now - epoch }

    /// One key per download stream of all views (a view's streams are numbered on, across reloads).
    static func key(view: Int, stream: Int) -> Int { view * 100_000 + stream % 100_000 }

    func record(stream key: Int, bytes: Int) {
        // Stamped under the lock, so the list stays in time order across threads.
        pending.withLock { $0.append(Arrival(stream: key, bytes: bytes, time: now)) }
    }

    /// Everything recorded since the last drain, in arrival order.
    func drain() -> [Arrival] { pending.withLock { list in defer { list = [] }; return list } }
}
