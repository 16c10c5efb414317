import Synchronization

/// The scoped stores that show part of a store's state (``Store/scope(state:action:fileID:line:column:)``): those
/// that follow it, and those it made.
///
/// The store updates them on its processor, after its state changed and before any subscriber hears of it, in two
/// steps: first every scoped store (and every scope of those) takes its part of the new state, then their
/// subscribers are told, then the store's own. So a subscriber of the store or of any scope of it that reads another
/// scope sees the part of the state it was called for: a view of the parent is never older than the parent.
/// (Following through a subscription of the parent, as scoped stores first did, left them behind for every
/// subscriber called before that one; telling each scope's subscribers as soon as that scope had followed left its
/// siblings behind.)
@usableFromInline
final class ScopeFollowers<State: Sendable>: Sendable {
    /// Takes the scoped store's part of the state; returns what tells its subscribers, to run once every scope has
    /// followed.
    @usableFromInline typealias Follow = @Sendable (State) -> PendingDelivery?

    private struct Table: Sendable {
        var entries: ContiguousArray<(id: UInt64, follow: Follow)> = []
        var nextID: UInt64 = 0
        var made = ScopeCache()
    }

    private let table = Locked(Table())
    /// Whether any scoped store follows: read on every dispatch, so that a store without scopes does not copy its
    /// state out of the lock for nobody. Changed under the store's state lock and the tree lock.
    @usableFromInline let count = Atomic<Int>(0)
    /// The lock of the store's root and all its scopes (see ``ScopeTree``).
    @usableFromInline let tree: ScopeTree

    @usableFromInline
    init(tree: ScopeTree?) {
        self.tree = tree ?? ScopeTree()
    }

    @inlinable
    var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Adds `follow`; returns what removes it.
    func add(_ follow: @escaping Follow) -> ScopeLink {
        let id = table.withLock { table in
            defer { table.nextID += 1 }
            table.entries.append((table.nextID, follow))
            return table.nextID
        }
        count.add(1, ordering: .relaxed)
        return ScopeLink { [weak self] in
            guard let self else { return }
            self.table.withLock { $0.entries.removeAll { $0.id == id } }
            self.count.subtract(1, ordering: .relaxed)
        }
    }

    /// The scoped store made from `key`, if it still lives.
    func madeScope(for key: ScopeCache.Key) -> (any AnyObject & Sendable)? {
        table.withLock { $0.made.scope(for: key) }
    }

    /// Records `scope` as made from `key`; returns the one to use, which is one made meanwhile if it still lives.
    func recordScope(_ scope: any AnyObject & Sendable, for key: ScopeCache.Key) -> any AnyObject & Sendable {
        table.withLock { $0.made.insert(scope, for: key) }
    }

    /// Shows `state` to every scoped store that follows. Called on the store's processor.
    /// - Returns: What tells their subscribers, in the order the scopes started following.
    @usableFromInline
    func follow(_ state: State) -> [PendingDelivery] {
        table.withLock({ $0.entries }).compactMap { $0.follow(state) }
    }
}

/// The subscribers of a scoped store to tell of the state it took, after its siblings took theirs.
@usableFromInline
struct PendingDelivery {
    @usableFromInline let deliver: () -> Void

    @usableFromInline
    init(_ deliver: @escaping () -> Void) {
        self.deliver = deliver
    }
}

/// Keeps a scoped store following its parent; removes it from the parent's followers when released.
final class ScopeLink: Sendable {
    private let remove: @Sendable () -> Void

    init(remove: @escaping @Sendable () -> Void) {
        self.remove = remove
    }

    deinit {
        remove()
    }
}
