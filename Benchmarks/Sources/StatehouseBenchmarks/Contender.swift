/// One library's way of holding an `Int` that observers listen to, as the container benchmarks exercise it.
///
/// Each benchmark row is written once, against this protocol, and run for every contender, so that every library
/// does exactly the same work.
protocol Contender: SendableMetatype {
    associatedtype Subject: Sendable
    associatedtype Subscription

    static var name: String { get }
    /// The rows this library can take part in; the others print "—".
    static var rows: Set<ContainerRow> { get }

    static func make() -> Subject
    static func read(_ subject: Subject) -> Int
    static func write(_ subject: Subject, _ value: Int)
    /// Adds 1 the way the library lets two threads do it (exact only if the library offers an atomic update).
    static func increment(_ subject: Subject)
    static func subscribe(_ subject: Subject, _ sink: ObserverSink) -> Subscription
    static func cancel(_ subscription: Subscription)
}

enum ContainerRow: CaseIterable {
    case read, write0, write1, write100, perObserver, contendedIncrement, subscribeCancel, memoryPerSubscription

    var title: String {
        switch self {
        case .read: "value read"
        case .write0: "modify, 0 observers"
        case .write1: "modify, 1 observer"
        case .write100: "modify, 100 observers"
        case .perObserver: "each synchronous observer"
        case .contendedIncrement: "2 threads read-modify-write"
        case .subscribeCancel: "subscribe + cancel"
        case .memoryPerSubscription: "memory per subscription"
        }
    }

    var unit: String {
        self == .memoryPerSubscription ? "B" : "ns"
    }
}
