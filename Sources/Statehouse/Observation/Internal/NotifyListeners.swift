/// Calls every live listener in `listeners` with `value`: the delivery loop of containers and stores.
///
/// The loop's shape is for speed: switching on each element of a borrowed array with a `where` clause borrows the
/// element, whereas `for case let entry? in listeners` (or the same switch without `where`) copies it, two retains
/// and two releases per listener, which tripled the cost of each listener.
/// The `where` clause does real work too: it skips cancelled subscriptions without the handshake in `invoke`.
@inlinable
func notifyListeners<Value>(
    of value: Value,
    in listeners: borrowing ContiguousArray<ObserverTable<Value>.Entry?>,
    on thread: UInt
) {
    var index = 0
    while index < listeners.count {
        switch listeners[index] {
        case .some(let entry) where entry.mayBeLive:
            entry.deliver(value, on: thread)
        default:
            break
        }
        index += 1
    }
}
