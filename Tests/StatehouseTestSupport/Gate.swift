import Statehouse

/// Holds async work until the test opens it: an effect waits on a gate, so that the test decides when it goes on.
public final class Gate: Sendable {
    private struct Contents: Sendable {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let contents = Locked(Contents())

    public init() {}

    /// Lets every waiter, present and future, go on.
    public func open() {
        let waiters = contents.withLock { contents in
            contents.isOpen = true
            defer { contents.waiters = [] }
            return contents.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open.
    public func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = contents.withLock { contents in
                if !contents.isOpen { contents.waiters.append(continuation) }
                return contents.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// How many are waiting now.
    public var waiting: Int {
        contents.withLock { $0.waiters.count }
    }
}
