/// Everything a ``StateContainer`` guards with its lock, and the rules for changing it.
///
/// This is the container's logic without the locking: each mutating method returns what the caller must do once it
/// has released the lock, usually a ``DeliveryRound`` to hand to the listeners.
///
/// Deliveries are serialized by a ``WorkQueue`` of rounds: one thread at a time delivers, and a change made meanwhile
/// is queued, replacing a change queued right before it (listeners get the latest value; a new listener's first
/// value keeps its place). This is what keeps every listener's calls in order, free of re-entrant duplicates, ending
/// with the last value, with memory bounded however fast other threads change the container.
///
/// ``changeCount`` counts every change, under the same lock as the change: persistence compares it with the count it
/// last saved to know whether a local change is pending, and so never decides that from a flag set later.
@usableFromInline
struct ContainerState<Value: Sendable>: Sendable {
    @usableFromInline typealias Listener = @Sendable (Value) -> Void
    @usableFromInline typealias Observers = ObserverTable<Value>

    @usableFromInline private(set) var value: Value
    @usableFromInline private(set) var observers = Observers()
    /// How many rounds queued by other threads one caller delivers before a background thread takes over.
    @usableFromInline static var shareForOthers: Int { 8 }

    @usableFromInline var deliveries = WorkQueue<DeliveryRound<Value>>(shareForOthers: shareForOthers)
    /// How many changes the value has had: local ones and those taken from storage.
    @usableFromInline private(set) var changeCount: UInt64 = 0
    /// The ``changeCount`` of the last value taken from storage, which another process or machine stored.
    private var storedChangeCount: UInt64?

    /// Notes that the change just made took a value from storage.
    mutating func noteChangeFromStorage() {
        storedChangeCount = changeCount
    }

    /// What the container's ``StateContainer/activity`` reads.
    var activity: ContainerActivity {
        ContainerActivity(
            changeCount: changeCount, listenerCount: observers.count,
            lastChangeCameFromStorage: changeCount > 0 && storedChangeCount == changeCount
        )
    }

    /// Named listeners (``StateContainer/bind(name:_:)``): binding a name again replaces its listener.
    private var named: [String: ContainerSubscription<Value>] = [:]
    /// Attached ``StateListener`` objects, so that attaching one twice registers it once.
    private var listeners: [ObjectIdentifier: ListenerSubscription<Value>] = [:]

    @usableFromInline
    init(value: Value) {
        self.value = value
    }

    // MARK: Changes

    /// Replaces the value; returns the round the caller must deliver, if any, and the value replaced.
    ///
    /// The caller lets the replaced value go once it has released the lock: the value may hold the last reference to
    /// a token of this container, whose cancellation takes the lock ("Recursive call to lock Mutex" when it was
    /// destroyed here).
    @inlinable
    mutating func replace(with newValue: Value) -> (round: DeliveryRound<Value>?, replaced: Value) {
        var replaced = newValue
        swap(&value, &replaced)
        return (changed(), replaced)
    }

    /// Runs `body` on the value in place. What it changed before throwing is kept and delivered too.
    @inlinable
    mutating func update<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) -> (Swift.Result<Result, Failure>, DeliveryRound<Value>?) {
        let result = Swift.Result { () throws(Failure) in try body(&value) }
        return (result, changed())
    }

    /// Records a change of the value: `replace`, `update`, or an in-place change of a reference type.
    @inlinable
    mutating func changed() -> DeliveryRound<Value>? {
        changeCount &+= 1
        if observers.isEmpty { return nil }
        return startOrQueue(DeliveryRound(value: value, kind: .change(observers.entries)))
    }

    // MARK: Listeners

    /// Registers `body` for `subscription`, built for ``ObserverTable/nextSlot``; with `initial`, also delivers the
    /// current value to it first.
    @inlinable
    mutating func add(
        _ subscription: ContainerSubscription<Value>,
        body: @escaping Listener,
        initial: Bool
    ) -> DeliveryRound<Value>? {
        let entry = Observers.Entry(subscription: subscription, body: body)
        // Without `initial`, the entry moves into the table rather than being copied, which would retain and release
        // its `unowned` reference.
        guard initial else {
            observers.insert(entry, at: Int(subscription.slot))
            return nil
        }
        observers.insert(entry, at: Int(subscription.slot))
        return startOrQueue(DeliveryRound(value: value, kind: .initial(entry)))
    }

    /// Removes the listener of `subscription`; returns its entry, which the caller lets go outside the lock (see
    /// ``ObserverTable/remove(_:at:)``).
    @inlinable
    mutating func remove(_ subscription: ContainerSubscription<Value>) -> Observers.Entry? {
        observers.remove(subscription, at: Int(subscription.slot))
    }

    /// A listener taken out of the lists: its subscription, which the caller cancels, and its entry, already out of
    /// the table, which the caller lets go outside the lock (see ``ObserverTable/remove(_:at:)``).
    typealias Removed = (subscription: ContainerSubscription<Value>, entry: Observers.Entry?)

    /// Makes `subscription` the listener named `name`; returns the one it replaces.
    mutating func bind(_ subscription: ContainerSubscription<Value>, name: String) -> Removed? {
        guard let replaced = named.updateValue(subscription, forKey: name) else { return nil }
        return (replaced, remove(replaced))
    }

    /// Removes the listener named `name`, if any.
    mutating func unbind(name: String) -> Removed? {
        guard let removed = named.removeValue(forKey: name) else { return nil }
        return (removed, remove(removed))
    }

    /// The subscription of `listener`, if it is attached and alive.
    func subscription(of listener: ObjectIdentifier) -> ListenerSubscription<Value>? {
        guard let subscription = listeners[listener], subscription.isListenerAlive else { return nil }
        return subscription
    }

    /// Records `subscription` as the one of its listener; returns the registration of a dead listener that had the
    /// same identity.
    mutating func attach(_ subscription: ListenerSubscription<Value>) -> Removed? {
        guard let previous = listeners.updateValue(subscription, forKey: subscription.listenerID) else { return nil }
        return (previous, remove(previous))
    }

    mutating func detach(_ subscription: ListenerSubscription<Value>) -> Observers.Entry? {
        if listeners[subscription.listenerID] === subscription {
            listeners[subscription.listenerID] = nil
        }
        return remove(subscription)
    }

    /// Empties the table (the container is going away, and this state was taken out of its lock), marks the
    /// synchronous subscriptions cancelled, and returns the others, for the caller to tell and cancel. The listeners
    /// are released before this returns, not kept until the caller's waits end.
    ///
    /// A subscription its listener holds (a queued one, a stream's, an attached listener's) lives while its entry
    /// does, so it can be referenced; cancelling it waits for a call in progress on its queue. The others are
    /// synchronous, and no call of theirs can be running, since a delivery holds the container: they are only
    /// marked. One of them may be a token in its own `deinit` on another thread, so it is reached through the
    /// memory its entry keeps, never referenced (see ``ObserverTable/Entry``).
    mutating func endSubscriptions() -> [SubscriptionToken] {
        var heldByListeners: [SubscriptionToken] = []
        for case let entry? in observers.removeAll() {
            entry.subscription.withoutRetaining { subscription in
                if subscription.isHeldByItsListener {
                    heldByListeners.append(subscription)
                } else {
                    subscription.markOwnerEnded()
                }
            }
        }
        return heldByListeners
    }

    // MARK: Delivery

    /// Hands `round` to the caller to deliver now if nobody is delivering, or queues it for the deliverer.
    ///
    /// A change that replaces one queued before it hands the replaced one back, as a superseded round, for the
    /// caller to let go outside the lock (see ``DeliveryRound/Kind/superseded(_:)``).
    @inlinable
    mutating func startOrQueue(_ round: consuming DeliveryRound<Value>) -> DeliveryRound<Value>? {
        var superseded: ContiguousArray<Observers.Entry?>?
        let now = deliveries.submit(round) { last, new in
            guard case .change(let listeners) = last.kind, new.isChange else { return nil }
            superseded = listeners
            return new
        }
        return now ?? superseded.map { DeliveryRound(value: value, kind: .superseded($0)) }
    }
}
