import GroupProtocol

/// Requests in flight on one connection, by number: a reply may come before its waiter is installed (the send
/// suspended in between), so an early answer is kept until it is claimed. What each asks, and since when, is kept
/// until its answer comes (a slow join names them). A value owned by its connection's actor.
struct RequestTable {
    private var next = 1
    private var outstanding: Set<Int> = []
    private var asked: [Int: (kind: GroupMessage.Kind, since: ContinuousClock.Instant)] = [:]
    private var waiters: [Int: CheckedContinuation<GroupMessage.Reply, Never>] = [:]
    private var early: [Int: GroupMessage.Reply] = [:]
    private var closedWith: WireOutcome?

    /// A fresh request number, expecting an answer, and the message `make` builds with it.
    mutating func open(_ make: (Int) -> GroupMessage) -> (request: Int, message: GroupMessage) {
        let request = next
        next += 1
        outstanding.insert(request)
        let message = make(request)
        asked[request] = (message.kind, .now)
        return (request, message)
    }

    /// The requests not answered yet, oldest first.
    var unanswered: [(request: Int, kind: GroupMessage.Kind, since: ContinuousClock.Instant)] {
        asked.sorted { $0.key < $1.key }.map { ($0.key, $0.value.kind, $0.value.since) }
    }

    /// Resumes `continuation` with the answer: at once if it came already (or the table was failed).
    mutating func wait(_ request: Int, _ continuation: CheckedContinuation<GroupMessage.Reply, Never>) {
        if let reply = early.removeValue(forKey: request) ?? closedWith.map({ .init(request: request, outcome: $0) }) {
            outstanding.remove(request)
            continuation.resume(returning: reply)
        } else {
            waiters[request] = continuation
        }
    }

    /// The answer to its request; false when no such request is open.
    mutating func resolve(_ reply: GroupMessage.Reply) -> Bool {
        let request = reply.request
        guard outstanding.contains(request) else { return false }
        asked[request] = nil
        if let continuation = waiters.removeValue(forKey: request) {
            outstanding.remove(request)
            continuation.resume(returning: reply)
        } else {
            early[request] = reply
        }
        return true
    }

    /// The connection is gone: every waiter, now and later, gets `outcome`.
    mutating func failAll(_ outcome: WireOutcome) {
        closedWith = outcome
        for (request, continuation) in waiters { continuation.resume(returning: .init(request: request, outcome: outcome)) }
        waiters.removeAll()
        outstanding.removeAll()
        asked.removeAll()
        early.removeAll()
    }
}
