/// A property backed by a ``StateContainer``, so that code can listen to it.
///
/// ```swift
/// final class UserInfo {
///     @Listenable var name = "NIX"
/// }
/// let user = UserInfo()
/// user.$name.bindAndFire(name: "FirstScreen.title") { print("name:", $0) }   // prints "name: NIX"
/// user.name = "Ann"                                                        // prints "name: Ann"
/// ```
///
/// The projected value (`$name`) is the container. Without a `key`, the container gets a key of its own that no
/// other container shares, since every instance of the enclosing type has its own property.
@propertyWrapper
public struct Listenable<Value: Sendable>: Sendable {
    /// The container holding the property's value.
    public let projectedValue: StateContainer<Value>

    /// Wraps `wrappedValue` in a new container named `key`, or in one with a unique key.
    public init(wrappedValue: Value, key: String? = nil) {
        projectedValue = StateContainer(wrappedValue, key: key ?? KeyRegistry.shared.uniqueKey(prefix: "Listenable"))
    }

    /// The current value; setting it is ``StateContainer/modify(_:)``.
    public var wrappedValue: Value {
        get { projectedValue.value }
        nonmutating set { projectedValue.modify(newValue) }
    }
}
