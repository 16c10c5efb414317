/// Stored properties for protocol extensions, on Linux as on Apple platforms.
///
/// A protocol extension cannot add stored properties. Conforming to `AssociatedObjects` gives any class a side table
/// of values looked up by typed ``AssociatedKey``s:
///
/// ```swift
/// private let spinnerKey = AssociatedKey<Spinner>(.strong)
///
/// extension Refreshable where Self: AssociatedObjects {
///     var spinner: Spinner {
///         associatedValue(for: spinnerKey) { Spinner() }      // made once per object, kept while it lives
///     }
/// }
/// ```
///
/// Values live in ``AssociatedObjectsTable`` rather than in the Objective-C runtime, so the same code behaves the same
/// on every platform. An object never sees another object's values, even one that lived at the same address before
/// it; what a dead object held is released as ``AssociatedObjectsTable`` describes.
public protocol AssociatedObjects: AnyObject {}

/// A typed key for a value associated with objects, and how the value is held.
///
/// Make keys once, as `let` constants: each key is distinct from every other, even of the same type.
public struct AssociatedKey<Value>: Hashable, Sendable {
    /// How an associated value is held.
    public enum Policy: Sendable {
        /// The object keeps the value alive.
        case strong
        /// The value lives only as long as something else keeps it; then it reads as `nil`.
        case weak
    }

    let id: Int
    let policy: Policy

    /// A key for values held strongly.
    public init(_ policy: Policy = .strong) {
        precondition(policy == .strong, "a weak key needs a class type: AssociatedKey<SomeClass>(.weak)")
        self.id = AssociatedObjectsTable.shared.newKeyID()
        self.policy = policy
    }

    /// A key for a class-typed value held strongly or weakly.
    public init(_ policy: Policy = .strong) where Value: AnyObject {
        self.id = AssociatedObjectsTable.shared.newKeyID()
        self.policy = policy
    }
}

extension AssociatedObjects {
    /// The value associated with this object under `key`, or `nil`.
    public func associatedValue<Value>(for key: AssociatedKey<Value>) -> Value? {
        AssociatedObjectsTable.shared.value(of: self, for: key.id) as? Value
    }

    /// The value associated under `key`, made by `make` and stored the first time.
    ///
    /// Safe from several threads at once: all of them get the same value. `make` may run on more than one of them
    /// (it runs outside the table's lock, so it may use associated values itself); the value stored first wins and
    /// the others are dropped.
    public func associatedValue<Value>(for key: AssociatedKey<Value>, default make: () -> Value) -> Value {
        if let value = associatedValue(for: key) { return value }
        let made = make()
        let stored = AssociatedObjectsTable.shared.setIfAbsent(stored(made, for: key), of: self, for: key.id)
        return stored as? Value ?? made
    }

    /// Associates `value` with this object under `key`, replacing what was there; `nil` removes it.
    public func setAssociatedValue<Value>(_ value: Value?, for key: AssociatedKey<Value>) {
        AssociatedObjectsTable.shared.set(value.map { stored($0, for: key) }, of: self, for: key.id)
    }

    /// `value` as the table holds it under `key`'s policy.
    private func stored<Value>(_ value: Value, for key: AssociatedKey<Value>) -> AssociatedObjectsTable.Stored {
        if key.policy == .weak, let object = value as AnyObject? {
            return .weak(WeakBox(object))
        }
        return .strong(value)
    }
}
