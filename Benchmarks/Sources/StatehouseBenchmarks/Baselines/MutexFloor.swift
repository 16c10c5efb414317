import Synchronization

/// The floor: a bare `Mutex<Int>` and an array of closures, with no ordering, re-entrancy or cancellation
/// guarantees. Statehouse aims to come close to it, not to beat it.
enum MutexFloor: Contender {
    static let name = "Mutex floor"
    static let rows = Set(ContainerRow.allCases)

    static func make() -> Floor { Floor() }
    static func read(_ subject: Floor) -> Int { subject.value.withLock { $0 } }
    static func write(_ subject: Floor, _ value: Int) {
        subject.value.withLock { $0 = value }
        for listener in subject.listeners { listener(value) }
    }
    static func increment(_ subject: Floor) { subject.value.withLock { $0 += 1 } }
    static func subscribe(_ subject: Floor, _ sink: ObserverSink) -> Floor {
        subject.listeners.append { sink.total &+= $0 }
        return subject
    }
    static func cancel(_ subscription: Floor) { subscription.listeners.removeLast() }

    /// @unchecked: `listeners` is only changed from one thread; the contended row touches `value` alone.
    final class Floor: @unchecked Sendable {
        let value = Mutex(0)
        var listeners: [(Int) -> Void] = []
    }
}
