/// Everything a ``Store`` guards with its state lock, and the rules for changing it: the state, and its subscribers
/// in selection groups. The logic without the locking; see ``StoreWork`` for the order in which work happens.
@usableFromInline
struct StoreState<State: Sendable>: Sendable {
    @usableFromInline typealias Group = SelectionGroup<State>
    @usableFromInline typealias Entry = ObserverTable<State>.Entry

    /// The state; `nil` only in a scoped store that does not follow its parent (it has nothing to tell, and reads
    /// its state through the parent; see ``ScopeUpstream``).
    @usableFromInline private(set) var followedState: State?
    /// How many times the state changed: actions, replacements and states taken from storage. Persistence compares
    /// it with the count it last saved (see ``PersistenceMachine``).
    @usableFromInline private(set) var changeCount: UInt64 = 0
    @usableFromInline private(set) var groups: ContiguousArray<Group?> = []
    @usableFromInline private(set) var freeGroups: [Int] = []
    @usableFromInline private(set) var groupsByKey: [SelectionKey: Int] = [:]
    /// The key-path objects last looked up in ``groupsByKey``, found again by identity.
    @usableFromInline private(set) var recentKeyPaths = RecentKeyPaths()
    /// How many subscribers are registered, in every group.
    @usableFromInline private(set) var subscriberCount = 0
    /// How many key-path groups have no subscriber (see ``remove(_:)``).
    @usableFromInline private(set) var emptyKeyedGroups = 0

    @inlinable
    init(state: State?) {
        self.followedState = state
    }

    /// The state. Not for a scoped store that does not follow its parent (``followedState`` is `nil` there).
    @inlinable
    var state: State {
        _read { yield followedState! }
    }

    /// Runs `reducer` for `action`; returns its effect and the subscribers whose selection changed.
    @inlinable
    mutating func reduce<Action>(
        _ action: Action,
        with reducer: (inout State, Action) -> Effect<Action>
    ) -> (Effect<Action>, DeliveryRound<State>?) {
        let effect = reducer(&followedState!, action)
        changeCount &+= 1
        return (effect, changedSubscribers())
    }

    /// Replaces the whole state (a scoped store following its parent, time travel); returns whom to tell.
    @inlinable
    mutating func replace(with newState: State) -> DeliveryRound<State>? {
        followedState = newState
        changeCount &+= 1
        return changedSubscribers()
    }

    /// A scoped store's part of its parent's new state: replaces the state, if the store follows its parent.
    @inlinable
    mutating func follow(_ newState: State) -> DeliveryRound<State>? {
        guard followedState != nil else { return nil }
        return replace(with: newState)
    }

    /// A scoped store starts following its parent from `state`, its part of the parent's current state. It has no
    /// subscriber (or it would follow already): nobody to tell.
    @inlinable
    mutating func startFollowing(from state: State) {
        followedState = state
    }

    /// A scoped store stops following its parent: it drops its copy of the state and reads through the parent.
    mutating func stopFollowing() {
        followedState = nil
    }

    /// The subscribers of every group whose selection changed, with the state to give them.
    @inlinable @inline(__always)
    mutating func changedSubscribers() -> DeliveryRound<State>? {
        // Empty groups are not refreshed (see `add`): with no subscriber there is nothing to compare, and a store
        // without subscribers (the common `dispatch`) makes no call.
        subscriberCount == 0 ? nil : changedGroups()
    }

    /// `mutating`, though it changes only the groups' last selections (objects): called on the state being changed,
    /// a non-mutating method was given a copy of the whole `StoreState` (a `memcpy` on every dispatch).
    @inlinable
    mutating func changedGroups() -> DeliveryRound<State>? {
        var changed: [ContiguousArray<Entry?>] = []
        // Read once: one copy costs less than the state's accessor once per group (116 instructions more per dispatch
        // with 10 groups, measured).
        let state = self.state
        for case let group? in groups where !group.subscribers.isEmpty && group.refresh(state) {
            changed.append(group.subscribers.entries)
        }
        return changed.isEmpty ? nil : DeliveryRound(value: state, kind: .changes(changed))
    }

    /// Adds the listener `makeBody` makes for `subscription` to the group shared under `key`, or to a new group
    /// made by `makeGroup`; returns what gives the subscriber the current selection, or `nil` if it was cancelled
    /// meanwhile.
    ///
    /// `makeBody` receives the group's last selection (see ``SelectionGroup/selection``), which its listener
    /// delivers: the group selected it when it compared, so the subscriber does not select again.
    @inlinable
    mutating func add(
        _ subscription: StoreSubscriptionBase,
        sharing key: SelectionKey?,
        makeGroup: (State) -> Group,
        makeBody: (_ selection: any AnyObject & Sendable) -> Group.Listener
    ) -> FirstValue? {
        guard !subscription.isCancelled else { return nil }
        let groupIndex: Int
        if let key, let shared = keyedGroup(for: key) {
            groupIndex = shared
            // An empty group was not refreshed while empty: bring its last selection up to date first.
            switch groups[shared] {
            case .some(let group) where group.subscribers.isEmpty:
                _ = group.refresh(state)
                emptyKeyedGroups -= 1
            default: break
            }
        } else {
            groupIndex = freeGroups.popLast() ?? groups.count
            if groupIndex == groups.count {
                groups.append(makeGroup(state))
            } else {
                groups[groupIndex] = makeGroup(state)
            }
            if let key {
                groupsByKey[key] = groupIndex
                recentKeyPaths.remember(key.keyPath, group: groupIndex)
            }
        }
        // Borrowed, not bound with `guard let`: that retained and released the group.
        switch groups[groupIndex] {
        case .some(let group):
            let slot = group.subscribers.nextSlot
            let listener = makeBody(group.selection)
            subscription.setLocation(group: groupIndex, slot: slot)
            group.subscribers.insert(Entry(subscription: subscription, body: listener), at: slot)
            subscriberCount += 1
            return FirstValue(state: state, listener: listener)
        case .none:
            return nil
        }
    }

    /// The state a new subscriber is shown first, and its listener: the subscriber delivers it, outside the lock,
    /// through the subscription it holds (not a ``DeliveryRound``, whose entry and copies cost a store subscribe four
    /// retains and as many releases, and generic value-witness calls).
    @usableFromInline
    struct FirstValue: Sendable {
        @usableFromInline let state: State
        @usableFromInline let listener: Group.Listener

        @inlinable
        init(state: State, listener: @escaping Group.Listener) {
            self.state = state
            self.listener = listener
        }

        @inlinable
        func deliver(through subscription: SubscriptionToken, on thread: UInt) {
            subscription.deliver(on: thread) { listener(state) }
        }
    }

    /// The group shared under `key`: by identity if its key-path object was looked up lately, else by value.
    @inlinable
    mutating func keyedGroup(for key: SelectionKey) -> Int? {
        if let group = recentKeyPaths.group(of: key.keyPath) { return group }
        guard let group = groupsByKey[key] else { return nil }
        recentKeyPaths.remember(key.keyPath, group: group)
        return group
    }

    /// Removes `subscription`. A selection of its own goes with it; a key-path group stays, empty, for the next
    /// subscriber of that key path, so that subscribing and cancelling in a loop selects and allocates nothing.
    ///
    /// Key paths are values, though (`\.rows[id]`): the empty groups are let go once they outnumber the key-path
    /// groups that have subscribers (and are more than 16), and every group once the last subscriber is gone from a
    /// store that had many. So the groups, their last selections, and the slots each dispatch walks are bounded by
    /// the subscribers a store has had at once, not by every key path it was ever asked for.
    ///
    /// - Returns: What was taken out, for the caller to let go once it has released the lock (see
    ///   ``ObserverTable/remove(_:at:)``), and whether this removed the last subscriber.
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func remove(_ subscription: StoreSubscriptionBase) -> Removal? {
        guard let (groupIndex, slot) = subscription.location, groupIndex < groups.count,
            let group = groups[groupIndex], let entry = group.subscribers.remove(subscription, at: slot)
        else { return nil }
        subscriberCount -= 1
        /// A group of its own goes with its only subscriber, and with it the subscriber's closures.
        var ownGroup: Group?
        if group.subscribers.isEmpty {
            if group.key == nil {
                ownGroup = group
                groups[groupIndex] = nil
                freeGroups.append(groupIndex)
            } else {
                emptyKeyedGroups += 1
            }
        }
        if subscriberCount == 0, groups.count > 64 {
            dropAllGroups()
        } else if emptyKeyedGroups > max(16, groupsByKey.count - emptyKeyedGroups) {
            dropEmptyKeyedGroups()
        }
        return Removal(entry: entry, ownGroup: ownGroup, wasLast: subscriberCount == 0)
    }

    /// What ``remove(_:)`` took out of the groups, to be let go outside the lock, and whether the store has no
    /// subscriber left.
    @usableFromInline
    struct Removal: Sendable {
        @usableFromInline let entry: Entry
        @usableFromInline let ownGroup: Group?
        @usableFromInline let wasLast: Bool

        @inlinable
        init(entry: Entry, ownGroup: Group?, wasLast: Bool) {
            self.entry = entry
            self.ownGroup = ownGroup
            self.wasLast = wasLast
        }
    }

    /// Frees every key-path group that has no subscriber. O(key-path groups), of which at least half are freed.
    @usableFromInline
    mutating func dropEmptyKeyedGroups() {
        let emptied = groupsByKey.filter { groups[$0.value]?.subscribers.isEmpty ?? true }
        for (key, index) in emptied {
            groups[index] = nil
            freeGroups.append(index)
            groupsByKey[key] = nil
        }
        recentKeyPaths.removeAll()
        emptyKeyedGroups = 0
    }

    /// Frees every group, when none has a subscriber left: a burst of subscribers leaves no slots behind for every
    /// dispatch to walk.
    @usableFromInline
    mutating func dropAllGroups() {
        groups = []
        freeGroups = []
        groupsByKey = [:]
        recentKeyPaths.removeAll()
        emptyKeyedGroups = 0
    }

    /// Empties every group (the store is going away) and returns the entries, which keep their subscriptions'
    /// memory (see ``ObserverTable/Entry``).
    mutating func removeAll() -> ContiguousArray<Entry?> {
        var entries: ContiguousArray<Entry?> = []
        for index in groups.indices {
            entries += groups[index]?.subscribers.removeAll() ?? []
        }
        dropAllGroups()
        subscriberCount = 0
        return entries
    }
}
