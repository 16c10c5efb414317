import Foundation

/// What a persisted container or store asks of its persistence; the core types know persistence only through it.
@usableFromInline
protocol Persisting<Value>: AnyObject, Sendable {
    associatedtype Value: Sendable

    /// Whether the owner's `update` goes through ``updateInTransaction(_:)``.
    var updatesInTransactions: Bool { get }
    /// The last failure, or `nil` once a write succeeded: what the app observes.
    var lastError: StateContainer<StorageError?> { get }

    /// The owner changed; `count` is its change count after the change, `value` the value it produced. Called after
    /// the owner released its lock: two reports may arrive out of order, and the later count wins.
    func changed(_ value: Value, count: UInt64)
    /// The owner took `value`, read from storage, as its change number `count`: it is saved already.
    func tookStoredValue(_ value: Value, count: UInt64)
    /// Whether the owner, whose change count is `count`, has a change the storage does not have yet. Called under
    /// the owner's lock, so that the answer and the change the owner then makes are one step.
    func hasPendingChange(ownerCount count: UInt64) -> Bool
    /// Runs one update of the owner as a transaction of the storage, run again while it fails for a reason that may
    /// pass (a few times, with a short backoff). `attempt` runs inside each transaction with the stored value (`nil`
    /// if nothing decodable is stored) and returns the value to store, without changing the owner: a transaction
    /// that fails then leaves nothing to undo, and nothing computed from data the storage no longer holds to write
    /// later. Once one commits, `adopt` makes the stored value the owner's and returns its snapshot, or `nil` if the
    /// owner changed since that attempt (its change is newer, and is written over the stored value). If every try
    /// fails, the failure is reported and the owner is left as it was.
    func updateInTransaction(_ attempt: (_ stored: Value?) -> Value, adopt: () -> PersistedSnapshot<Value>?)
    /// Writes unsaved changes now.
    func flush() throws(StorageError)
    /// Writes what is pending of an owner that is going away, and stops following outside changes.
    func ownerDidEnd()
}

/// The owner's side of following changes others make: the persistence asks it for its change count and hands it
/// the values read from storage.
protocol PersistenceOwner<Value>: AnyObject, Sendable {
    associatedtype Value: Sendable

    /// The owner's change count now, or `nil` if its lock is held: the check then waits for its next turn, since
    /// waiting for the lock on the writer could deadlock with a flush from inside a reducer or an `update` body.
    func currentChangeCount() -> UInt64?
    /// Takes `value` from storage if the owner's count is still `count` (a local change made meanwhile is newer,
    /// and wins), telling the persistence with ``Persisting/tookStoredValue(_:count:)``; otherwise calls `refused`.
    /// May do so later, on another thread.
    func takeStoredValue(_ value: Value, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void)
}

/// An owner's value and the change count it had then.
@usableFromInline
struct PersistedSnapshot<Value: Sendable>: Sendable {
    @usableFromInline let value: Value
    @usableFromInline let count: UInt64

    @inlinable
    init(value: Value, count: UInt64) {
        self.value = value
        self.count = count
    }
}
