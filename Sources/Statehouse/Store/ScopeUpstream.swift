/// A scoped store's link to its parent, which is all that makes it a scoped store (see ``StoreRole``): how it reads
/// its part of the parent's state, starts and stops following the parent, sends its actions to the parent, runs its
/// work in the parent's work loop, and which store runs its effects.
///
/// A scoped store *follows* its parent — keeps a copy of its part of the parent's state, updated on the processor
/// with every change of the parent's (see ``ScopeFollowers``) — only while something needs the copy: a subscriber,
/// or a scope of its own that follows. Otherwise it keeps no copy and has nobody to tell; its `state` reads through
/// the parent, and a dispatch to the parent costs it nothing. An `ifLet` scope follows from the moment it is made
/// (it is *pinned*): it must remember the last non-`nil` child, which reading through the parent cannot give.
///
/// Starting and stopping happen under the ``ScopeTree`` lock. A scope starts following under its parent's state lock:
/// it reads its part of the parent's state and joins the parent's followers in one critical section, the one
/// ``Store/commitWithoutTelling(_:)`` asks for followers in, so a change of the parent is either in the state it read
/// or followed afterwards. Subscribers start their store following on the root's processor, which is the only thread
/// that changes state: there no change can be half-way through being followed. A scope made off the processor (an
/// `ifLet`) has no subscriber yet, so a change followed once more after it read it tells nobody.
@usableFromInline
final class ScopeUpstream<State: Sendable, Action: Sendable>: Sendable {
    /// Called with the tree lock held: has the parent follow its own parent if it does not; then, under the parent's
    /// state lock, calls `start` with this store's part of the parent's state and adds `follow` to the parent's
    /// followers. Returns what removes it, or `nil`, doing nothing else, if the part is `nil` now (`ifLet`).
    typealias Attach = @Sendable (
        _ tree: inout ScopeTree.Transaction,
        _ start: (State) -> Void,
        _ follow: @escaping @Sendable (State) -> PendingDelivery?
    ) -> ScopeLink?

    @usableFromInline let tree: ScopeTree
    /// This store's part of the parent's current state, read through the parent; not used by a pinned scope.
    @usableFromInline let read: @Sendable () -> State
    let attach: Attach
    /// Called with the tree lock held, when this store stopped following: lets the parent stop too if nothing else
    /// needs it.
    let parentMayStop: @Sendable (_ tree: inout ScopeTree.Transaction) -> Void
    /// Whether the store follows for as long as it lives.
    @usableFromInline let isPinned: Bool
    /// The store's place among the parent's followers while it follows. Changed with the tree lock held.
    private let link = Locked<ScopeLink?>(nil)
    /// Sends the store's actions, converted, to the parent: the parent's middleware and reducer apply them.
    @usableFromInline let actions: ParentActions<Action>
    /// Enters the parent's work loop (``Store/enter(_:orQueue:waits:)``) with the store's work: `now` if the parent is
    /// idle, else the body `later` makes, in order with the parent's work. One loop serializes a store and every
    /// scope of it, and a caller from outside waits as the parent's own callers do.
    @usableFromInline let enterParent: @Sendable (
        _ now: () -> Void, _ later: () -> @Sendable () -> Void, _ waits: Arrival
    ) -> Entered
    /// The parent: its reducer applies this store's actions, so their effects run there.
    @usableFromInline let effectsHost: any EffectsHost

    init(
        tree: ScopeTree,
        pinned: Bool,
        read: @escaping @Sendable () -> State,
        attach: @escaping Attach,
        parentMayStop: @escaping @Sendable (_ tree: inout ScopeTree.Transaction) -> Void,
        actions: ParentActions<Action>,
        enterParent: @escaping @Sendable (
            _ now: () -> Void, _ later: () -> @Sendable () -> Void, _ waits: Arrival
        ) -> Entered,
        effectsHost: any EffectsHost
    ) {
        self.tree = tree
        self.isPinned = pinned
        self.read = read
        self.attach = attach
        self.parentMayStop = parentMayStop
        self.actions = actions
        self.enterParent = enterParent
        self.effectsHost = effectsHost
    }

    /// Whether the store follows its parent.
    var isFollowing: Bool {
        link.withLock { $0 != nil }
    }

    /// Records the store's place among the parent's followers. Tree lock held.
    func setLink(_ newLink: ScopeLink) {
        link.withLock { $0 = newLink }
    }

    /// Takes the store's place among the parent's followers; releasing it leaves them. Tree lock held.
    func takeLink() -> ScopeLink? {
        link.withLock { link in
            defer { link = nil }
            return link
        }
    }
}
