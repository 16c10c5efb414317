import Foundation

/// What the sync loops last learned, from which (with the number of pending actions) ``SyncStatus`` follows.
struct SyncHealth: Sendable, Equatable {
    var offline: (since: Date, retryingAt: Date)?
    var failure: SyncError?
    var refused: [SyncRefusal] = []

    static func == (a: SyncHealth, b: SyncHealth) -> Bool {
        a.offline?.since == b.offline?.since && a.offline?.retryingAt == b.offline?.retryingAt
            && a.failure == b.failure && a.refused == b.refused
    }

    /// The status to show: what needs the user most comes first.
    func status(pending: Int) -> SyncStatus {
        if let failure { return .failed(failure) }
        if let offline { return .offline(since: offline.since, retryingAt: offline.retryingAt) }
        if !refused.isEmpty { return .refused(refused) }
        return pending == 0 ? .synced : .pending(pending)
    }

    mutating func reached() {
        offline = nil
        failure = nil
    }

    mutating func failed(_ error: SyncError, retryingIn delay: Duration, now: Date = Date()) {
        if error.isPassing {
            failure = nil
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            offline = (offline?.since ?? now, now.addingTimeInterval(seconds))
        } else {
            offline = nil
            failure = error
        }
    }
}

/// Waits between tries: doubling from `first` up to `limit`, each wait drawn at random between half and all of it,
/// so that clients the same outage cut off do not all come back at the same instant.
struct Backoff: Sendable {
    var first: Duration = .milliseconds(250)
    var limit: Duration = .seconds(30)
    private var current: Duration?

    mutating func next() -> Duration {
        let ceiling = current.map { min($0 * 2, limit) } ?? first
        current = ceiling
        return ceiling * Double.random(in: 0.5...1)
    }

    mutating func reset() {
        current = nil
    }
}
