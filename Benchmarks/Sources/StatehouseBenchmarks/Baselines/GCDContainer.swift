import Dispatch

/// The first article's container: a concurrent queue, reads with `sync`, writes with an async barrier, and
/// `didModify()` calling the listeners right after — the design whose flaws Statehouse fixes.
///
/// @unchecked: every stored property is only touched on `queue`, as the article does.
final class GCDContainer: @unchecked Sendable {
    private var storedValue = 0
    private var listeners: [Int: (Int) -> Void] = [:]
    private var nextListener = 0
    private let queue = DispatchQueue(label: "benchmark.gcd", attributes: .concurrent)

    var value: Int { queue.sync { storedValue } }

    func modify(_ newValue: Int) {
        queue.async(flags: .barrier) { self.storedValue = newValue }
        didModify()
    }

    func didModify() {
        let listeners = queue.sync { self.listeners }
        guard !listeners.isEmpty else { return }
        let value = self.value
        for listener in listeners.values { listener(value) }
    }

    func observe(_ listener: @escaping (Int) -> Void) -> Int {
        queue.sync(flags: .barrier) {
            nextListener += 1
            listeners[nextListener] = listener
            return nextListener
        }
    }

    func removeListener(_ id: Int) {
        queue.sync(flags: .barrier) { _ = listeners.removeValue(forKey: id) }
    }
}

enum GCDContender: Contender {
    static let name = "GCD container"
    static let rows = Set(ContainerRow.allCases)

    static func make() -> GCDContainer { GCDContainer() }
    static func read(_ subject: GCDContainer) -> Int { subject.value }
    static func write(_ subject: GCDContainer, _ value: Int) { subject.modify(value) }
    static func increment(_ subject: GCDContainer) { subject.modify(subject.value + 1) }
    static func subscribe(_ subject: GCDContainer, _ sink: ObserverSink) -> (GCDContainer, Int) {
        (subject, subject.observe { sink.total &+= $0 })
    }
    static func cancel(_ subscription: (GCDContainer, Int)) { subscription.0.removeListener(subscription.1) }
}
