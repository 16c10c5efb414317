/// How a container's subscriptions reach it to leave it, without keeping it alive and without a `weak` reference.
///
/// A weak reference gives the object it points to a side table for good, and from then on every retain and release
/// of that object takes the runtime's slow path: about 250 of the 1,500 instructions of a subscribe + cancel. So the
/// container owns this small object, which points back to it unretained, and subscriptions retain the link instead.
///
/// The pointer is used only under the link's lock, and the container's `deinit` clears it under the same lock before
/// anything is torn down: a subscription leaving while the container ends either finishes with the container first
/// (the `deinit` waits for the lock) or finds it gone.
@usableFromInline
final class ContainerLink: Sendable {
    private let container = Locked<Unmanaged<AnyObject>?>(nil)

    @usableFromInline
    init() {}

    /// Points the link at `container`, once, from its initializer (which cannot pass `self` before it made the link).
    @usableFromInline
    func connect(to container: any AnyObject & Sendable) {
        self.container.withLock { $0 = Unmanaged.passUnretained(container) }
    }

    /// Runs `body` with the container, unless it ended (then returns `nil`); the container's `deinit` waits until
    /// `body` returns.
    ///
    /// Not generic: subscriptions call it from unspecialized code, where a generic result's metadata was looked up
    /// on every call (about 1,000 instructions of a subscribe + cancel). What `body` returns is what the caller must
    /// let go outside this lock, a listener's table entry: 24 bytes, stored in the existential without allocating.
    func withContainer(_ body: (AnyObject) -> (any Sendable)?) -> (any Sendable)? {
        container.withLock { container in
            guard let container else { return nil }
            return body(container.takeUnretainedValue())
        }
    }

    /// Called first by the container's `deinit`: no subscription reaches it from now on.
    @usableFromInline
    func containerDidEnd() {
        container.withLock { $0 = nil }
    }
}
