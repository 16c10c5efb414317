/// How much a container is used and where its value last came from: what a debugging tool such as
/// StatehouseInspector shows of it.
public struct ContainerActivity: Sendable, Equatable {
    /// ``StateContainer/changeCount``.
    public let changeCount: UInt64
    /// How many listeners it has: closures, named listeners, attached objects and async sequences.
    public let listenerCount: Int
    /// Whether the last change was a value another process or machine stored, which the container took from its
    /// storage, rather than a change made here.
    public let lastChangeCameFromStorage: Bool
}

extension StateContainer {
    /// How much the container is used and where its value last came from, read at one instant.
    public var activity: ContainerActivity {
        locked { $0.activity }
    }
}
