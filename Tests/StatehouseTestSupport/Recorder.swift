import Statehouse

/// Collects what listeners receive, from any thread.
///
/// On `Locked` rather than `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux and would report false races.
public final class Recorder<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])

    public init() {}

    public func append(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    public var elements: [Element] {
        storage.withLock { $0 }
    }

    public var count: Int {
        storage.withLock { $0.count }
    }
}
