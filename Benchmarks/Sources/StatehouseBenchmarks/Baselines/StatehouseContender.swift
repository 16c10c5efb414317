import Statehouse
import Synchronization

enum StatehouseContender: Contender {
    static let name = "Statehouse"
    static let rows = Set(ContainerRow.allCases)

    static func make() -> StateContainer<Int> {
        StateContainer(0, key: BenchmarkKeys.next())
    }
    static func read(_ subject: StateContainer<Int>) -> Int { subject.value }
    static func write(_ subject: StateContainer<Int>, _ value: Int) { subject.modify(value) }
    static func increment(_ subject: StateContainer<Int>) { subject.update { $0 += 1 } }
    static func subscribe(_ subject: StateContainer<Int>, _ sink: ObserverSink) -> SubscriptionToken {
        subject.observe { sink.total &+= $0 }
    }
    static func cancel(_ subscription: SubscriptionToken) { subscription.cancel() }
}

/// Fresh keys, so that benchmark containers never share one.
enum BenchmarkKeys {
    private static let counter = Atomic<Int>(0)
    static func next() -> String { "benchmark.\(counter.add(1, ordering: .relaxed).newValue)" }
}
