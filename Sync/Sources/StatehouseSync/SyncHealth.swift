import Foundation

/// What the sync loops last learned and how many actions wait, from which ``SyncStatus`` follows.
struct SyncHealth: Sendable, Equatable {
    struct Offline: Sendable, Equatable {
        var since: Date
        var retryingAt: Date
    }

    var pending: Int
    /// At this many pending actions, new ones are refused: that is the first thing to show.
    var outboxLimit = Int.max
    var offline: Offline?
    var failure: SyncError?
    /// The refusals the app has not acknowledged, in order: kept until it does, so that none goes unseen when the
    /// next answer comes before anyone looked.
    var refused: [SyncRefusal] = []

    /// The status to show: what needs the user most comes first.
    var status: SyncStatus {
        status(pending: pending)
    }

    /// The status with `pending` actions waiting: for a storage that counts them elsewhere, as it reads the status.
    func status(pending: Int) -> SyncStatus {
        if pending >= outboxLimit { return .failed(.outboxFull(limit: outboxLimit)) }
        if let failure { return .failed(failure) }
        if let offline { return .offline(since: offline.since, retryingAt: offline.retryingAt) }
        if !refused.isEmpty { return .refused(refused) }
        return pending == 0 ? .synced : .pending(pending)
    }

    /// Adds `refusals` to those shown; one reported again (its batch pushed again) is shown once.
    mutating func refuse(_ refusals: [SyncRefusal]) {
        let shown = Set(refused.map(\.seq))
        refused += refusals.filter { !shown.contains($0.seq) }
    }

    mutating func reached() {
        offline = nil
        failure = nil
    }

    mutating func failed(_ error: SyncError, retryingIn delay: Duration, now: Date = Date()) {
        if error.isPassing {
            failure = nil
            let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            offline = Offline(since: offline?.since ?? now, retryingAt: now.addingTimeInterval(seconds))
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
