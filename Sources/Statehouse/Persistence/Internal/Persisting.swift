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
    /// The owner took `value`, read from storage, as its change number `count`: it is saved already. Called under the
    /// owner's lock, so that the count and "saved" move in one step: a check reading the count in between would take
    /// the value for a local change not yet written, and skip the key. Returns the snapshot it replaced, for the
    /// owner to let go once it has released its lock (it may hold the last reference to a token of the owner).
    func tookStoredValue(_ value: Value, count: UInt64) -> PersistedSnapshot<Value>
    /// A try of ``updateInTransaction(_:adopt:)`` runs the owner's update body now: returns whether the owner, whose
    /// change count is `count`, has a change the storage does not have yet (the body then starts from the value in
    /// memory). Called under the owner's lock, so that the answer and the body's start are one step.
    func transactionTryStarts(ownerCount count: UInt64) -> Bool
    /// Runs one update of the owner as a transaction of the storage, run again while it fails for a reason that may
    /// pass (a few times, with a short backoff, during which the key's other writes go on). `attempt` runs inside
    /// each transaction with the stored value (`nil` if nothing decodable is stored) and returns the value to store,
    /// without changing the owner: a transaction that fails then leaves nothing to undo, and nothing computed from
    /// data the storage no longer holds to write later. Once one commits, `adopt` makes the stored value the owner's
    /// and returns its snapshot, or `nil` if the owner changed since that attempt (its change is newer, and is
    /// written over the stored value). If every try fails, the failure is reported and the owner is left as it was.
    func updateInTransaction(_ attempt: (_ stored: Value?) -> Value, adopt: () -> PersistedSnapshot<Value>?)
    /// Writes unsaved changes now.
    func flush() throws(StorageError)
    /// Writes what is pending of an owner that is going away, and stops following outside changes.
    func ownerDidEnd()
}

/// What an outside-change check learns when it asks for its owner's change count.
enum OwnerChangeCount: Sendable, Equatable {
    case count(UInt64)
    /// The owner's lock is held: the check waits for its next turn, since waiting for the lock on the writer could
    /// deadlock with a flush from inside a reducer or an `update` body.
    case busy
    /// The owner is gone.
    case ended
}

/// The owner's side of following changes others make: the persistence asks it for its change count and hands it
/// the values read from storage.
protocol PersistenceOwner<Value>: AnyObject, Sendable {
    associatedtype Value: Sendable

    /// How a check reads the owner's change count: called on the writer, at each check, with no lock held.
    ///
    /// Made once, when following starts. It should not keep the owner alive: what holds the owner during the call
    /// may hold its last reference, and the owner then ends on the writer, after the thread that let it go has gone
    /// on with its key still taken. ``readingItself(_:)`` makes one for an owner whose lock is its own.
    func changeCountReader() -> @Sendable () -> OwnerChangeCount
    /// Takes `value` from storage if the owner's count is still `count` (a local change made meanwhile is newer,
    /// and wins), telling the persistence with ``Persisting/tookStoredValue(_:count:)``; otherwise calls `refused`.
    /// May do so later, on another thread.
    func takeStoredValue(_ value: Value, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void)
}

extension PersistenceOwner {
    /// A change-count reader that holds the owner for each call, and reads the count with `count`, `nil` if the
    /// owner's lock is held: for an owner whose lock lives in itself (a store). An owner let go during the call
    /// ends on the writer.
    func readingItself(_ count: @escaping @Sendable (Self) -> UInt64?) -> @Sendable () -> OwnerChangeCount {
        { [weak self] in
            guard let self else { return .ended }
            return count(self).map { .count($0) } ?? .busy
        }
    }
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
