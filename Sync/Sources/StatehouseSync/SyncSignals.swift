import Synchronization

/// What a synced store's journal tells its sync loops from inside each step, under the journal's lock: how many
/// actions wait, into the health the status is made of, and, for an app's action, a wake for the push loop.
///
/// Set under the journal's lock, the health's count is never behind the journal: ``SyncedStore/status`` reads it
/// exact, `.pending` as soon as a dispatch returns, and an outbox at its limit as soon as an action found it so.
/// Publishing the status waits for the loop the wake wakes (its listeners are the app's, and may read the store,
/// whose lock is held here): published on every dispatch, the status cost more than the rest of the dispatch. The
/// loop reads the state under the journal's lock, so it finds the action that woke it.
@usableFromInline
final class SyncSignals: Sendable {
    let wake = WakeSignal()
    /// Raised when the status changes kind with a step (nothing waits, something does, the outbox is full): the
    /// engine's publisher publishes it then, whatever the push loop is waiting for (a back-off of up to 30 s).
    let statusChanged = WakeSignal()
    /// Taken under the journal's lock, or alone; never the other way round.
    let health: Mutex<SyncHealth>

    @usableFromInline
    init(pending: Int, outboxLimit: Int) {
        health = Mutex(SyncHealth(pending: pending, outboxLimit: outboxLimit))
    }

    /// Sets the count of the journal as it was loaded, before any step.
    @usableFromInline
    func journalLoaded(pending: Int) {
        health.withLock { $0.pending = pending }
    }

    /// Called by the journal's reducer after each step.
    @usableFromInline
    func journalChanged(pending: Int, byApp: Bool) {
        let changedKind = health.withLock { health in
            let before = health.status
            health.pending = pending
            return !before.isSameKind(as: health.status)
        }
        if changedKind { statusChanged.raise() }
        if byApp { wake.raise() }
    }
}
