/// Everything a ``StateContainer`` guards with its lock, and the rules for changing it.
///
/// This is the container's logic without the locking: each mutating method returns what the caller must do once it
/// has released the lock, usually a ``DeliveryRound`` to hand to the listeners.
///
/// Deliveries are serialized: one thread at a time delivers (the *deliverer*), taking rounds from `pending` in
/// order until none are left. A thread that changes the value while another thread — or a listener on this very
/// thread — is delivering only queues its change. This is what keeps every listener's calls in order, free of
/// re-entrant duplicates, and ending with the last value.
struct ContainerState<Value: Sendable>: Sendable {
    typealias Observer = ContainerObserver<Value>

    private(set) var value: Value
    /// Counts changes; a listener added at version `v` receives changes `v + 1` and later.
    private(set) var version: UInt64 = 0
    private(set) var observers = ObserverTable<Observer>()
    private var pending = PendingRounds<Value>()
    private var isDelivering = false

    /// Named listeners (``StateContainer/bind(name:_:)``): binding a name again replaces its listener.
    private var named: [String: Observer] = [:]
    /// Attached ``StateListener`` objects, so that attaching one twice registers it once.
    private var listeners: [ObjectIdentifier: ListenerObserver<Value>] = [:]

    init(value: Value) {
        self.value = value
    }

    // MARK: Changes

    /// Replaces the value; returns the round the caller must deliver, if any.
    mutating func replace(with newValue: Value) -> DeliveryRound<Value>? {
        value = newValue
        return changed()
    }

    /// Runs `body` on the value in place. What it changed before throwing is kept and delivered too.
    mutating func update<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) -> (Swift.Result<Result, Failure>, DeliveryRound<Value>?) {
        let result = Swift.Result { () throws(Failure) in try body(&value) }
        return (result, changed())
    }

    /// Records a change of the value: `replace`, `update`, or an in-place change of a reference type.
    mutating func changed() -> DeliveryRound<Value>? {
        version &+= 1
        if observers.isEmpty { return nil }
        return startOrQueue(.change(version: version), value: value)
    }

    // MARK: Observers

    /// Registers the observer `make` builds; with `initial`, also delivers the current value to it first.
    mutating func add<Made: Observer>(
        initial: Bool,
        make: (_ slot: Int) -> Made
    ) -> (Made, DeliveryRound<Value>?) {
        let slot = observers.nextSlot
        let observer = make(slot)
        observers.insert(observer, at: slot, since: version)
        guard initial else { return (observer, nil) }
        return (observer, startOrQueue(.initial(observer), value: value))
    }

    mutating func remove(_ observer: Observer) {
        observers.remove(observer, at: observer.slot)
    }

    /// Makes `observer` the listener named `name`; returns the listener it replaces, already removed.
    mutating func bind(_ observer: Observer, name: String) -> Observer? {
        guard let replaced = named.updateValue(observer, forKey: name) else { return nil }
        remove(replaced)
        return replaced
    }

    /// Removes the listener named `name`; returns it so that the caller can cancel it.
    mutating func unbind(name: String) -> Observer? {
        guard let removed = named.removeValue(forKey: name) else { return nil }
        remove(removed)
        return removed
    }

    /// The live observer registered for `listener`, if it is attached.
    func attachedObserver(for listener: ObjectIdentifier) -> ListenerObserver<Value>? {
        guard let observer = listeners[listener], observer.isListenerAlive else { return nil }
        return observer
    }

    mutating func attach(_ observer: ListenerObserver<Value>, for listener: ObjectIdentifier) {
        if let previous = listeners.updateValue(observer, forKey: listener) {
            remove(previous)
        }
    }

    mutating func detach(_ observer: ListenerObserver<Value>, for listener: ObjectIdentifier) {
        if listeners[listener] === observer {
            listeners[listener] = nil
        }
        remove(observer)
    }

    /// Empties every list of observers (the container is going away) and returns the observers.
    mutating func removeAllObservers() -> [Observer] {
        named = [:]
        listeners = [:]
        return observers.removeAll()
    }

    // MARK: Delivery

    /// The next round for the deliverer, or `nil` when it is done and may leave.
    mutating func nextRound() -> DeliveryRound<Value>? {
        guard let next = pending.popFirst() else {
            isDelivering = false
            return nil
        }
        return DeliveryRound(value: next.value, kind: next.kind, observers: observers.entries)
    }

    private mutating func startOrQueue(_ kind: DeliveryRound<Value>.Kind, value: Value) -> DeliveryRound<Value>? {
        if isDelivering {
            pending.append(PendingRounds.Round(value: value, kind: kind))
            return nil
        }
        isDelivering = true
        return DeliveryRound(value: value, kind: kind, observers: observers.entries)
    }
}

/// One change (or one initial value) to deliver, with the observers registered when delivery began.
struct DeliveryRound<Value: Sendable>: Sendable {
    enum Kind: Sendable {
        /// The change that made `version`: every observer registered before it.
        case change(version: UInt64)
        /// The value at subscription time, for one observer that asked for it.
        case initial(ContainerObserver<Value>)
    }

    let value: Value
    let kind: Kind
    let observers: ContiguousArray<ObserverTable<ContainerObserver<Value>>.Entry?>

    func deliver(on thread: UInt) {
        switch kind {
        case .change(let version):
            for case let entry? in observers where entry.since < version {
                entry.observer.receive(value, on: thread)
            }
        case .initial(let observer):
            observer.receive(value, on: thread)
        }
    }
}

/// A first-in first-out queue of rounds waiting for the deliverer.
struct PendingRounds<Value: Sendable>: Sendable {
    struct Round: Sendable {
        let value: Value
        let kind: DeliveryRound<Value>.Kind
    }

    private var rounds: [Round] = []
    private var head = 0

    mutating func append(_ round: Round) {
        rounds.append(round)
    }

    mutating func popFirst() -> Round? {
        guard head < rounds.count else { return nil }
        let round = rounds[head]
        head += 1
        if head == rounds.count {
            rounds.removeAll(keepingCapacity: rounds.count <= 64)
            head = 0
        }
        return round
    }
}
