/// Everything a ``Store`` guards with its state lock, and the rules for changing it: the state, and its subscribers
/// in selection groups. The logic without the locking; see ``StoreWork`` for the order in which work happens.
@usableFromInline
struct StoreState<State: Sendable>: Sendable {
    @usableFromInline typealias Group = SelectionGroup<State>
    @usableFromInline typealias Entry = ObserverTable<Group.Listener>.Entry

    @usableFromInline private(set) var state: State
    /// How many times the state changed: actions, replacements and states taken from storage. Persistence compares
    /// it with the count it last saved (see ``StatePersistence``).
    @usableFromInline private(set) var changeCount: UInt64 = 0
    @usableFromInline private(set) var groups: ContiguousArray<Group?> = []
    @usableFromInline private(set) var freeGroups: [Int] = []
    @usableFromInline private(set) var groupsByKey: [SelectionKey: Int] = [:]

    @inlinable
    init(state: State) {
        self.state = state
    }

    /// Runs `reducer` for `action`; returns its effect and the subscribers whose selection changed.
    @inlinable
    mutating func reduce<Action>(
        _ action: Action,
        with reducer: (inout State, Action) -> Effect<Action>
    ) -> (Effect<Action>, DeliveryRound<State>?) {
        let effect = reducer(&state, action)
        changeCount &+= 1
        return (effect, changedSubscribers())
    }

    /// Replaces the whole state (a scoped store following its parent, time travel); returns whom to tell.
    @inlinable
    mutating func replace(with newState: State) -> DeliveryRound<State>? {
        state = newState
        changeCount &+= 1
        return changedSubscribers()
    }

    /// The subscribers of every group whose selection changed, with the state to give them.
    @inlinable
    func changedSubscribers() -> DeliveryRound<State>? {
        var changed: [ContiguousArray<Entry?>] = []
        var index = 0
        while index < groups.count {
            // A `where` clause borrows the group instead of copying it (see `notifyListeners`).
            switch groups[index] {
            case .some(let group) where !group.subscribers.isEmpty && group.refresh(state):
                changed.append(group.subscribers.entries)
            default:
                break
            }
            index += 1
        }
        return changed.isEmpty ? nil : DeliveryRound(value: state, kind: .changes(changed))
    }

    /// Adds `body` for `subscription` to the group shared under `key`, or to a new group made by `makeGroup`;
    /// returns the round that gives the subscriber the current selection, or `nil` if it was cancelled meanwhile.
    @inlinable
    mutating func add(
        _ subscription: StoreSubscriptionBase,
        body: @escaping Group.Listener,
        sharing key: SelectionKey?,
        makeGroup: (State) -> Group
    ) -> DeliveryRound<State>? {
        guard !subscription.isCancelled else { return nil }
        let groupIndex: Int
        if let key, let shared = groupsByKey[key] {
            groupIndex = shared
            // An empty group was not refreshed while empty: bring its last selection up to date first.
            if let group = groups[shared], group.subscribers.isEmpty { _ = group.refresh(state) }
        } else {
            groupIndex = freeGroups.popLast() ?? groups.count
            if groupIndex == groups.count {
                groups.append(makeGroup(state))
            } else {
                groups[groupIndex] = makeGroup(state)
            }
            if let key { groupsByKey[key] = groupIndex }
        }
        let entry = Entry(subscription: subscription, body: body)
        let slot = groups[groupIndex]?.subscribers.nextSlot ?? 0
        subscription.setLocation(group: groupIndex, slot: slot)
        groups[groupIndex]?.subscribers.insert(entry, at: slot)
        return DeliveryRound(value: state, kind: .initial(entry))
    }

    /// Removes `subscription`. A selection of its own goes with it; a key-path group stays, empty, for the next
    /// subscriber of that key path (there are only as many as the code has key paths, and an empty group costs
    /// nothing per dispatch).
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func remove(_ subscription: StoreSubscriptionBase) {
        guard let (groupIndex, slot) = subscription.location, groupIndex < groups.count else { return }
        groups[groupIndex]?.subscribers.remove(subscription, at: slot)
        if let group = groups[groupIndex], group.subscribers.isEmpty, group.key == nil {
            groups[groupIndex] = nil
            freeGroups.append(groupIndex)
        }
    }

    /// Empties every group (the store is going away) and returns the subscriptions.
    mutating func removeAll() -> [Subscription] {
        var subscriptions: [Subscription] = []
        for index in groups.indices {
            subscriptions += groups[index]?.subscribers.removeAll() ?? []
        }
        groups = []
        freeGroups = []
        groupsByKey = [:]
        return subscriptions
    }
}
