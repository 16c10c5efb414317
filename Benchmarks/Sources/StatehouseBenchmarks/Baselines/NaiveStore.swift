import Synchronization

/// A store built the straightforward way, the store rows' floor: a lock around the state, an array of
/// subscribers that each re-run their selector and compare with their own last value on every dispatch, and a
/// linear search to unsubscribe.
///
/// @unchecked: `subscribers` and each subscriber's last value are only touched with `lock` held or by the one
/// benchmark thread.
final class NaiveStore<State: Sendable, Action: Sendable>: @unchecked Sendable {
    private final class Subscriber {
        let id: Int
        let update: (State) -> Void
        init(id: Int, update: @escaping (State) -> Void) {
            self.id = id
            self.update = update
        }
    }

    private let lock: Mutex<State>
    private let reducer: (inout State, Action) -> Void
    private var subscribers: [Subscriber] = []
    private var nextID = 0

    init(initialState: State, reducer: @escaping (inout State, Action) -> Void) {
        self.lock = Mutex(initialState)
        self.reducer = reducer
    }

    /// The current state, read under the lock.
    var state: State {
        lock.withLock { $0 }
    }

    func dispatch(_ action: Action) {
        let state = lock.withLock { state in
            reducer(&state, action)
            return state
        }
        for subscriber in subscribers { subscriber.update(state) }
    }

    func subscribe<Value: Equatable>(_ keyPath: KeyPath<State, Value> & Sendable, _ listener: @escaping (Value) -> Void) -> Int {
        var last = lock.withLock { $0 }[keyPath: keyPath]
        listener(last)
        nextID += 1
        subscribers.append(Subscriber(id: nextID) { state in
            let value = state[keyPath: keyPath]
            if value != last {
                last = value
                listener(value)
            }
        })
        return nextID
    }

    func unsubscribe(_ id: Int) {
        subscribers.removeAll { $0.id == id }
    }
}
