import Foundation
import TestSupport
import XCTest

/// Collects trick-play events (appended from the trick player's task, read by the test).
final class EventLog: @unchecked Sendable {
    // Sendable: `events` is only touched under `lock`.
    private let lock = NSLock()
    private var events: [String] = []
    private var times: [Double] = []
    private var ends: [Double] = []
    private var failures: [String] = []

    func record(_ event: TrickPlayEventSummary) {
        lock.withLock {
            switch event {
            case .frame(let t): times.append(t)
            case .end(let p): ends.append(p)
            case .failure(let s): failures.append(s)
            }
        }
    }
    var frameTimes: [Double] { lock.withLock { times } }
    var endPositions: [Double] { lock.withLock { ends } }
    var failureLines: [String] { lock.withLock { failures } }
}

enum TrickPlayEventSummary { case frame(Double), end(Double), failure(String) }
