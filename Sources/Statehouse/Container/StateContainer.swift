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

    @usableFromInline let state: Locked<ContainerState<Value>>
    @usableFromInline let registrar = ObservationRegistrar()
    @usableFromInline let keyRegistration: KeyRegistration
    /// Removes a cancelled listener. A closure made by the inlined initializer, so it runs code specialized for
    /// `Value`: a method called from `Subscription.cancel()` would run generic code, about 5,000 instructions per
    /// cancellation instead of a few hundred.
    @usableFromInline let removeListener: @Sendable (StateContainer<Value>, ContainerSubscription<Value>) -> Void
    /// For a persisted container: what writes its value to its storage.
    @usableFromInline let persistence: StatePersistence<Value>?

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
    init(_ initialValue: Value, key: String, persistence: StatePersistence<Value>?) {
        self.key = key
        self.state = Locked(ContainerState(value: initialValue))
        self.keyRegistration = KeyRegistry.shared.register(key)
        self.persistence = persistence
        self.removeListener = { container, subscription in
            container.state.withLock { $0.remove(subscription) }
        }
    }

    deinit {
        if let persistence {
            persistence.flush(finalValue: state.withLock { $0.value })
        }
        let subscriptions = state.withLock { $0.removeAll() }
        for subscription in subscriptions {
            subscription.ownerDidEnd()
            subscription.cancel()
        }
    }

    /// The current value. Safe to read from any thread.
    @inlinable
    public var value: Value {
        registrar.accessed()
        return state.withLock { $0.value }
    }

    /// Replaces the value, then notifies the listeners.
    @inlinable
    public func modify(_ newValue: Value) {
        let round = registrar.changing { state.withLock { $0.replace(with: newValue) } }
        persistence?.changed()
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
    /// `body` runs while the container is locked: it must not use this container (it would deadlock) and should be
    /// quick. If `body` throws, whatever it changed before throwing is kept and delivered, and the error is rethrown.
    ///
    /// - Parameter body: Changes the value it is given in place.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    @inlinable @discardableResult
    public func update<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, round): (Swift.Result<Result, Failure>, DeliveryRound<Value>?)
        if let persistence, persistence.updatesInTransactions, let done = updateInTransaction(body, persistence) {
            (result, round) = done
        } else {
            (result, round) = registrar.changing { state.withLock { $0.update(body) } }
            persistence?.changed()
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
        let round = registrar.changing { state.withLock { $0.changed() } }
        persistence?.changed()
        if let round { deliver(round) }
    }

    /// Delivers `round`, then every round queued meanwhile, until none is left.
    @inlinable
    func deliver(_ round: DeliveryRound<Value>) {
        let thread = currentThreadIdentity()
        var next: DeliveryRound<Value>? = round
        while let round = next {
            round.deliver(on: thread)
            next = state.withLock { $0.nextRound() }
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

extension ObservationRegistrar {
    /// Reports a read of the value of the container or store that owns this registrar.
    @inlinable
    func accessed() {
        access(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath)
    }

    /// Runs `change` between the `willSet` and `didSet` reports of the owner's value.
    @inlinable
    func changing<Result>(_ change: () throws -> Result) rethrows -> Result {
        willSet(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath)
        defer { didSet(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath) }
        return try change()
    }
}

/// The subject and key path every container and store reports to its `ObservationRegistrar`.
///
/// A key path into the generic `StateContainer<Value>` is instantiated anew on every use (about 1 µs measured on
/// Linux); a key path into this non-generic class is built once. The registrar is the container's own, so the key
/// path only has to be the same for `access` and `willSet`.
@usableFromInline
final class ObservationAnchor: Observable, Sendable {
    @usableFromInline static let shared = ObservationAnchor()
    /// Even a non-generic key-path literal is looked up on every use (about 130 instructions); a stored one is not.
    /// `nonisolated(unsafe)` because `KeyPath` is not marked `Sendable`, but a key path is immutable.
    @usableFromInline nonisolated(unsafe) static let keyPath: KeyPath<ObservationAnchor, Void> = \.value

    @usableFromInline var value: Void { () }

    @usableFromInline init() {}
}
