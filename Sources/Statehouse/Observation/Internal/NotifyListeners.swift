/// Calls every live listener in `listeners` with `value`: the delivery loop of containers and stores.
///
/// The loop's shape is for speed, measured on Swift 6.3: switching on each element of a borrowed array with a
/// `where` clause borrows the element, whereas `for case let entry? in listeners` (or the same switch without
/// `where`) copies it, which costs two retains and two releases per listener (9 ns against 27 ns per listener).
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
