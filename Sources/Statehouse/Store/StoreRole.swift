/// What kind of store a ``Store`` is, with what only that kind has.
///
/// A *root* store applies actions: it has the middleware and reducer they go through, runs their effects, does its
/// own work, and may write its state to a storage. A *scoped* store (``Store/scope(state:action:fileID:line:column:)``)
/// is a view of part of its parent's state: it reads through the parent, sends its actions to the parent, and runs its
/// work in the parent's work loop (see ``ScopeUpstream``).
///
/// An enum of two classes, not a protocol or a class per role: the hot paths (`dispatch`, `subscribe`, a scope's
/// `state`) are inlined and specialized for the caller's types, and here pay one test of the word `role` is; a call
/// through a protocol witness or a class's table would run unspecialized generic code on every one of them.
@usableFromInline
enum StoreRole<State: Sendable, Action: Sendable>: Sendable {
    case root(RootParts<State, Action>)
    case scope(ScopeUpstream<State, Action>)

    /// The lock shared by the tree of scopes this store belongs to: its root's, for a scoped store; `nil` for a root
    /// store, which makes its own.
    @inlinable
    var scopeTree: ScopeTree? {
        switch self {
        case .root: nil
        case .scope(let upstream): upstream.tree
        }
    }
}

/// What only a root store has: its reducer and its storage. (Its middleware, folded with the reducer, is the store's
/// ``Store/pipeline``, which every store has.)
@usableFromInline
final class RootParts<State: Sendable, Action: Sendable>: Sendable {
    /// The reducer alone: time travel and replay apply recorded actions with it, without middleware or effects.
    @usableFromInline let reducer: @Sendable (inout State, Action) -> Effect<Action>
    /// What writes the state to its storage; `nil` for a store without storage.
    @usableFromInline let persistence: (any Persisting<State>)?
    /// What the store can undo and redo; `nil` for a store without an ``UndoPolicy``.
    @usableFromInline let undo: UndoLog<State, Action>?

    @inlinable
    init(
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        persistence: (any Persisting<State>)?,
        undo: UndoLog<State, Action>? = nil
    ) {
        self.reducer = reducer
        self.persistence = persistence
        self.undo = undo
    }
}

/// What a caller that entered a store's work loop (``Store/enter(_:orQueue:waits:)``) has left to do.
@usableFromInline
enum Entered {
    /// The store was idle: the caller did the work itself, at once, and nothing else holds it.
    case didNow
    /// The work was handed to the work loop: done, or queued and waited for as the caller's ``Arrival`` asked.
    case handedOn
    /// The work is queued for a caller that suspends (``Arrival/suspending``): it awaits this record.
    case suspend(WaitingCaller)
}
