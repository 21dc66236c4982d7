/// The callers waiting for the pipeline's next ASYNC_DONE (a seek's preroll): woken all at once by it or by a
/// failure, each also ended by its own timeout. A value owned by the `Player` actor (mutated only on it).
///
/// Why tickets: entering `withCheckedThrowingContinuation` on the player can hop (see `PlayerExecutor`), so a
/// waiter's continuation is stored a job after it asked; a wake-up or a timeout in between must not be missed.
struct AsyncDoneWaiters {
    /// What a waiter holds between asking and storing its continuation.
    struct Ticket: Equatable {
        let id: Int
        let wakeupsBefore: Int
    }

    private var waiting: [Int: CheckedContinuation<Void, Error>] = [:]
    private var nextID = 0
    private var wakeups = 0
    /// Timeouts that fired before their waiter was stored (only the newest ticket's can be pending).
    private var expired: [Int: Error] = [:]

    var count: Int { waiting.count }

    /// A ticket for a new waiter (older tickets' pending timeouts are moot by now).
    mutating func ticket() -> Ticket {
        expired = [:]
        defer { nextID += 1 }
        return Ticket(id: nextID, wakeupsBefore: wakeups)
    }

    /// Stores the waiter's continuation, or resumes it at once when it was woken (`failure`, if the player failed)
    /// or timed out since it took its ticket.
    mutating func store(_ continuation: CheckedContinuation<Void, Error>, for ticket: Ticket, failure: Error?) {
        if let error = expired.removeValue(forKey: ticket.id) {
            continuation.resume(throwing: error)
        } else if wakeups != ticket.wakeupsBefore {
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
        } else {
            waiting[ticket.id] = continuation
        }
    }

    /// The waiter's timeout fired: it ends with `error` (now, or when it stores its continuation).
    mutating func expire(_ id: Int, error: Error) {
        if let waiter = waiting.removeValue(forKey: id) {
            waiter.resume(throwing: error)
        } else if id == nextID - 1 {
            expired[id] = error
        }
    }

    /// ASYNC_DONE (no error) or a failure: every waiter resumes.
    mutating func wakeAll(with error: Error? = nil) {
        wakeups += 1
        let all = waiting
        waiting = [:]
        for (_, waiter) in all {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }
}
