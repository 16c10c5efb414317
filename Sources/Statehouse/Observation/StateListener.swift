import Dispatch

/// An object told about changes of the containers it is attached to, on a queue of its choice.
///
/// Containers hold their listeners weakly: a listener that is deallocated is never called again and needs no
/// removal. Attach with ``StateContainer/attach(listener:)``.
///
/// ```swift
/// final class LocationScreen: StateListener {
///     func stateModified<T>(_ state: StateContainer<T>) {
///         if let location = state.value as? Location { show(location) }
///     }
/// }
/// ```
public protocol StateListener: AnyObject {
    /// Called after a change of `state`, on ``stateListenerQueue``. Read `state.value` for the new value.
    func stateModified<T>(_ state: StateContainer<T>)

    /// The queue the listener is called on; read once, when the listener is attached. Defaults to the main queue,
    /// which only runs when something drains it (an app's run loop, `dispatchMain()`, an async `main`).
    var stateListenerQueue: DispatchQueue { get }
}

extension StateListener {
    public var stateListenerQueue: DispatchQueue { .main }
}
