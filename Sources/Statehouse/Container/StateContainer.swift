import Dispatch
import Observation
import Synchronization

/// A keyed, thread-safe box for a value that tells its listeners when the value changes.
///
/// ```swift
/// let theme = StateContainer("blue", key: "themeColor")
/// let token = theme.observe { print("theme is now", $0) }
/// theme.modify("red")                   // prints "theme is now red"
/// theme ~> "green"                      // the same as modify
/// let length = theme.update { $0 += "!"; return $0.count }   // atomic read-modify-write
/// ```
///
/// Reads and writes are safe from any thread. A change is visible to every thread before any listener hears of
/// it, and each listener receives the changes in the order they happened, always including the last one.
/// Listeners run outside the container's lock, so they may read or change the container themselves.
///
/// The ``key`` names the state app-wide. Two live containers with the same key are reported to
/// ``StatehouseDiagnostics``; see <doc:StateContainers>.
///
/// `StateContainer` conforms to `Observable`: SwiftUI views, and `withObservationTracking` on any platform, track
/// ``value`` with no adapter.
public final class StateContainer<Value: Sendable>: Sendable {
    /// The name of this state, unique among live containers.
    public let key: String

    @usableFromInline let observation = ObservationGate()
    @usableFromInline let keyRegistration: KeyRegistration
    /// For a persisted container: what writes its value to its storage.
    @usableFromInline let persistence: (any Persisting<Value>)?
    /// The value, the listeners and their lock, shared with the subscriptions, which leave through it without
    /// keeping the container alive (see ``ContainerLink``). It also marks the thread running an ``update(_:)`` body:
    /// a thread that finds the lock taken checks it, to stop a body that uses its own container with a message
    /// instead of a deadlock.
    @usableFromInline let link: ContainerLink<Value>

    /// Creates a container holding `initialValue`, identified by `key`.
    ///
    /// - Parameters:
    ///   - initialValue: The value until the first change.
    ///   - key: The name of this state. Another live container with the same key is reported to
    ///     ``StatehouseDiagnostics`` as ``StatehouseDiagnostic/Kind/duplicateKey``.
    @inlinable
    public convenience init(_ initialValue: Value, key: String) {
        self.init(initialValue, key: key, persistence: nil)
    }

    @inlinable
    init(_ initialValue: Value, key: String, persistence: (any Persisting<Value>)?) {
        self.key = key
        self.link = ContainerLink(key: key, state: ContainerState(value: initialValue)) { link, subscription in
            let removed = link.locked { $0?.remove(subscription) }
            // Let go outside the lock: the listener may hold the last reference to another token of this container,
            // whose cancellation takes that lock (see `ObserverTable.remove`).
            withExtendedLifetime(removed) {}
        }
        self.keyRegistration = KeyRegistry.shared.register(key)
        self.persistence = persistence
    }

    deinit {
        // From here on a subscription leaving finds no state. What was taken out is let go outside the lock: the
        // value and the listeners may hold the last references to other tokens of this container.
        guard var ended = link.end() else { return }
        persistence?.ownerDidEnd()
        let heldByListeners = ended.endSubscriptions()
        for subscription in heldByListeners { subscription.ownerDidEnd() }
        for subscription in heldByListeners { subscription.cancel() }
    }

    /// The current value. Safe to read from any thread.
    @inlinable
    public var value: Value {
        observation.accessed()
        return locked { $0.value }
    }

    /// How many times the value has changed since the container was created.
    ///
    /// Each ``modify(_:)``, ``update(_:)`` and ``didModify()`` counts one, and so does each value taken from storage
    /// after another process changed it; the count grows under the same lock as the change. Listeners can be called
    /// fewer times than that, since changes that queue up while a listener runs are coalesced (see ``Delivery``): a
    /// listener that must count every change reads this in each call and counts the difference from what it read in
    /// its previous call. The last change always gets a call of its own, so such a tally ends exact.
    ///
    /// - Complexity: O(1).
    public var changeCount: UInt64 {
        locked { $0.changeCount }
    }

    /// Replaces the value, then notifies the listeners.
    @inlinable
    public func modify(_ newValue: Value) {
        let round: DeliveryRound<Value>?
        do {
            let replacement = change { $0.replace(with: newValue) }
            round = replacement.round
        }
        // The replaced value was let go at the end of that block: outside the lock (see
        // `ContainerState.replace(with:)`), and before the change is delivered, so a token it held hears nothing of
        // the value that replaced it.
        if let round { deliver(round) }
    }

    /// Changes the value in place under the container's lock, then notifies the listeners.
    ///
    /// This is the way to derive a new value from the current one: `value += 1` would be two steps, and changes
    /// made by other threads between them would be lost.
    ///
    /// ```swift
    /// let count = StateContainer(0, key: "count")
    /// let newCount = count.update { $0 += 1; return $0 }
    /// ```
    ///
    /// `body` runs while the container is locked, so it must be quick and must not use a container or a store:
    /// this container's lock is not reentrant (using it from `body` stops the process with a message saying so),
    /// and two `update` bodies on two threads that each use the other's container could wait for each other forever:
    /// that too stops the process, with a message naming both containers. Read what `body` needs before calling
    /// `update`. If `body` throws, whatever it changed before throwing is kept and delivered, and the error is
    /// rethrown.
    ///
    /// On a container persisted to a ``TransactionalStorage`` (SQLite, PostgreSQL) `update` is a transaction of the
    /// storage, atomic across processes: `body` runs on the stored value (on the value in memory if a local change
    /// is not written yet), and the container takes the result once it is stored. A transaction that fails in a way
    /// that may pass (a lost connection, another writer that got in between) runs again, a few times, with a short
    /// backoff, while the caller waits: **`body` may run more than once**, each time from the value then stored, so
    /// it must not have effects outside its argument (as for GRDB's retried transactions). Listeners hear of the
    /// stored value only, and `update` returns (or throws) what `body` did in the attempt that was stored. If every
    /// attempt fails, the update is not applied: the value stays as it was, ``storageError`` reports why, `update`
    /// returns what `body` did in the last attempt, and nothing of that attempt is written later: it was made from
    /// data the storage may no longer hold, and writing it would undo other processes' updates. Call `update` again
    /// to try again.
    ///
    /// - Parameter body: Changes the value it is given in place. May run more than once (see above).
    /// - Returns: What `body` returns (in the attempt that was stored).
    /// - Throws: What `body` throws (in the attempt that was stored).
    @inlinable @discardableResult
    public func update<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, round): (Swift.Result<Result, Failure>, DeliveryRound<Value>?)
        // Counted before the lock is taken, so that the count costs nothing inside the critical section.
        let depth = UpdateBodyDepth.counter
        depth.pointee += 1
        defer { depth.pointee -= 1 }
        if persistence?.updatesInTransactions == true, let persistence {
            (result, round) = updateInTransaction(body, persistence)
        } else {
            (result, round) = change(forUpdate: true) { state in whileUpdating { state.update(body) } }
        }
        if let round { deliver(round) }
        return try result.get()
    }

    /// Notifies the listeners that the value changed in place.
    ///
    /// Only needed when `Value` is a reference type whose properties were changed directly: the container cannot
    /// see such changes. Value types should be changed with ``update(_:)`` instead.
    @inlinable
    public func didModify() {
        if let round = change({ $0.changed() }) { deliver(round) }
    }

    /// Makes a change under the lock, between the Observation reports, and tells persistence what it produced.
    ///
    /// - Parameter forUpdate: Whether this is an ``update(_:)``, which counts itself among the bodies this thread is
    ///   inside (see ``locked(forUpdate:_:)``).
    @inlinable
    func change<Result: Sendable>(
        forUpdate: Bool = false, _ body: (inout ContainerState<Value>) -> Result
    ) -> Result {
        // Compared, not bound: binding would retain the persistence, whose weak references make that a slow,
        // side-table retain on every change.
        if persistence == nil {
            return observation.changing { locked(forUpdate: forUpdate) { body(&$0) } }
        }
        let (result, snapshot) = observation.changing {
            locked(forUpdate: forUpdate) { state in
                let result = body(&state)
                return (result, PersistedSnapshot(value: state.value, count: state.changeCount))
            }
        }
        persistence?.changed(snapshot.value, count: snapshot.count)
        return result
    }

    /// Runs `body` on the state under the lock (see ``ContainerLink/locked(forUpdate:_:)``). The state is there
    /// while the container lives: only its `deinit` takes it out.
    @inlinable
    func locked<Result: Sendable>(
        forUpdate: Bool = false, _ body: (inout ContainerState<Value>) -> Result
    ) -> Result {
        link.locked(forUpdate: forUpdate) { body(&$0!) }
    }

    /// Runs `body`, an `update` body's call under the lock, marking this thread as the one inside it.
    @inlinable
    func whileUpdating<Result>(_ body: () -> Result) -> Result {
        link.updatingThread.store(currentThreadIdentity(), ordering: .relaxed)
        defer { link.updatingThread.store(0, ordering: .relaxed) }
        return body()
    }

    /// Replaces the value with `newValue` if `shouldReplace`, called with the current value under the lock, says so;
    /// then notifies the listeners. Nothing is written to storage.
    func modify(_ newValue: Value, if shouldReplace: (Value) -> Bool) {
        let round: DeliveryRound<Value>?
        do {
            let replacement = observation.changing {
                link.state.withLock { state in shouldReplace(state!.value) ? state!.replace(with: newValue) : nil }
            }
            round = replacement?.round
        }
        // The replaced value was let go at the end of that block: outside the lock, before the delivery (see
        // `modify(_:)`).
        if let round { deliver(round) }
    }

    /// Delivers `round`, then the rounds queued meanwhile, until none is left or this caller has done its share of
    /// other threads' rounds (see ``WorkQueue``).
    @inlinable
    func deliver(_ round: DeliveryRound<Value>) {
        // Not this thread's to deliver: it only carried a replaced change out of the lock, and lets it go here.
        if round.isSuperseded { return }
        let thread = currentThreadIdentity()
        var round = round
        while true {
            round.deliver(on: thread)
            switch link.state.withLock({ $0!.deliveries.next() }) {
            case .perform(let next): round = next
            case .finished: return
            case .handOff: return handOffDelivery()
            }
        }
    }

    /// Lets a background thread deliver the rounds this caller leaves.
    @usableFromInline
    func handOffDelivery() {
        runInBackground { [self] in
            if case .perform(let round) = link.state.withLock({ $0!.deliveries.resume(on: currentThreadIdentity()) }) {
                deliver(round)
            }
        }
    }

}

extension StateContainer: Observable {}

extension StateContainer: CustomStringConvertible {
    public var description: String {
        "StateContainer(key: \(String(reflecting: key)), value: \(String(reflecting: value)))"
    }
}

/// Replaces the value of `container` with `newValue`, then notifies its listeners: `theme ~> "green"`.
///
/// The standard library declares the operator `~>` already; redeclaring it would make every use ambiguous.
public func ~> <Value>(container: StateContainer<Value>, newValue: Value) {
    container.modify(newValue)
}
