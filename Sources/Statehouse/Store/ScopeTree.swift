/// The lock that starts and stops the following of every scoped store of one root store.
///
/// A scoped store follows its parent only while something needs it (see ``ScopeUpstream``). Starting and stopping
/// walk up the tree of scopes — a scope that starts makes its parent start first; a parent stops once its last
/// follower and subscriber are gone — and every such walk holds this one lock, shared by the root and all its scopes,
/// so that a parent never stops while one of its scopes starts following it.
///
/// Lock order: this lock first, then state locks (a parent's before its scope's), then follower tables. No code takes
/// this lock while holding any of those, and nothing that can end a store (and so take this lock in its `deinit`)
/// runs while it is held.
@usableFromInline
final class ScopeTree: Sendable {
    /// What is done once the lock is released: work that may call user code (Observation's `willSet` handlers).
    struct Transaction: Sendable {
        fileprivate var afterUnlocking: [@Sendable () -> Void] = []

        /// Runs `work` once the lock is released.
        mutating func afterUnlocking(_ work: @escaping @Sendable () -> Void) {
            afterUnlocking.append(work)
        }
    }

    private let lock = Locked(Transaction())

    /// Runs `body` with the lock held, then what it asked to run after unlocking.
    func withLock<Result: Sendable>(_ body: (inout Transaction) -> Result) -> Result {
        let (result, after) = lock.withLock { transaction in
            let result = body(&transaction)
            defer { transaction.afterUnlocking = [] }
            return (result, transaction.afterUnlocking)
        }
        for work in after { work() }
        return result
    }
}
