import Synchronization

/// The scoped stores that show part of a store's state (``Store/scope(state:action:)``).
///
/// The store updates them on its processor, after its state changed and before its own subscribers hear of it, so
/// that a subscriber of the parent that reads a scoped store sees the part of the state it was called for: a view
/// of the parent is never older than the parent. (Following through a subscription of the parent, as scoped stores
/// first did, left them behind for every subscriber called before that one.)
@usableFromInline
final class ScopeFollowers<State: Sendable>: Sendable {
    @usableFromInline typealias Follow = @Sendable (State) -> Void

    private struct Table: Sendable {
        var entries: ContiguousArray<(id: UInt64, follow: Follow)> = []
        var nextID: UInt64 = 0
    }

    private let table = Locked(Table())
    /// Whether any scoped store follows: read on every dispatch, so that a store without scopes does not copy its
    /// state out of the lock for nobody.
    @usableFromInline let count = Atomic<Int>(0)

    @usableFromInline
    init() {}

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

    /// Shows `state` to every scoped store. Called on the store's processor.
    @usableFromInline
    func follow(_ state: State) {
        for entry in table.withLock({ $0.entries }) {
            entry.follow(state)
        }
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
