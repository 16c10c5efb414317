import Synchronization

/// How a container's subscriptions reach it to leave it, without keeping it alive and without a `weak` reference.
///
/// A weak reference gives the object it points to a side table for good, and from then on every retain and release
/// of that object takes the runtime's slow path: about 250 of the 1,500 instructions of a subscribe + cancel. So the
/// container owns this small object, which points back to it unretained, and subscriptions retain the link instead.
///
/// The pointer is used only under the link's lock, and the container's `deinit` clears it under the same lock before
/// anything is torn down: a subscription leaving while the container ends either finishes with the container first
/// (the `deinit` waits for the lock) or finds it gone. One thread may meet the link twice: the reference a leaving
/// subscription takes to the container can be the last one, and then the container's `deinit`, and the
/// cancellations it makes, run on that thread inside the link's lock. ``holder`` says so, and those calls do not
/// take the lock again; and the `deinit` leaves its subscriptions' cancellations (which wait for listener calls in
/// progress, and such a listener may be cancelling another token of the container, so waiting for this lock) until
/// `withContainer` has unlocked.
@usableFromInline
final class ContainerLink: Sendable {
    private let lock = Locked(())
    /// The container's address; 0 before ``connect(to:)`` and once the container ended. Cleared under ``lock``.
    private let address = Atomic<UInt>(0)
    /// The thread inside ``withContainer(_:)``, 0 when none: only that thread ever finds its own identity here.
    private let holder = Atomic<UInt>(0)
    /// The subscriptions of a container that ended inside ``withContainer(_:)``, cancelled once it unlocked (by that
    /// thread; a later caller finds them taken). `hasCancellationsLeft` spares every `withContainer` of a live
    /// container the second lock.
    private let cancellationsLeft = Locked<[Subscription]>([])
    private let hasCancellationsLeft = Atomic<Bool>(false)
    /// The thread running the container's ``StateContainer/update(_:)`` body, 0 when none. Kept here, not in the
    /// container, so that a subscription leaving can check it before it waits for ``lock``: the thread holding the
    /// lock may be waiting for the container's lock, which that body holds.
    @usableFromInline let updatingThread = Atomic<UInt>(0)
    /// The container's key, for the message of ``refuseUseInsideUpdate(on:)``.
    private let key: String

    @usableFromInline
    init(key: String) {
        self.key = key
    }

    /// Points the link at `container`, once, from its initializer (which cannot pass `self` before it made the link).
    /// No lock: no subscription exists yet, and the one that will gets the link from the container, after this.
    @usableFromInline
    func connect(to container: any AnyObject & Sendable) {
        let pointer = Unmanaged.passUnretained(container as AnyObject).toOpaque()
        address.store(UInt(bitPattern: pointer), ordering: .releasing)
    }

    /// Runs `body` with the container, unless it ended (then returns `nil`); the container's `deinit` waits until
    /// `body` returns.
    ///
    /// Not generic: subscriptions call it from unspecialized code, where a generic result's metadata was looked up
    /// on every call (about 1,000 instructions of a subscribe + cancel). What `body` returns is what the caller must
    /// let go outside this lock, a listener's table entry: 24 bytes, stored in the existential without allocating.
    func withContainer(_ body: (AnyObject) -> (any Sendable)?) -> (any Sendable)? {
        let me = currentThreadIdentity()
        // Inside this thread's own call: the container ended meanwhile, from its last reference, this thread's.
        if holder.load(ordering: .relaxed) == me { return nil }
        // Inside the container's `update` body, the lock may be held by a thread waiting for that body to end.
        refuseUseInsideUpdate(on: me)
        let result = lock.withLock { _ in
            holder.store(me, ordering: .relaxed)
            defer { holder.store(0, ordering: .relaxed) }
            guard let pointer = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) else { return nil }
            return body(Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue())
        } as (any Sendable)?
        if hasCancellationsLeft.load(ordering: .relaxed) {
            let left = cancellationsLeft.withLock { left in
                defer { left = [] }
                return left
            }
            for subscription in left { subscription.cancel() }
        }
        return result
    }

    /// Called first by the container's `deinit`: no subscription reaches it from now on.
    /// - Returns: Whether the container ends inside this thread's ``withContainer(_:)``, holding the link's lock: then
    ///   its subscriptions are cancelled with ``cancelAfterUnlocking(_:)``.
    @usableFromInline
    func containerDidEnd() -> Bool {
        if holder.load(ordering: .relaxed) == currentThreadIdentity() {
            // This thread holds the lock: its `withContainer` let go of the last reference (see above).
            address.store(0, ordering: .releasing)
            return true
        }
        lock.withLock { _ in address.store(0, ordering: .releasing) }
        return false
    }

    /// Cancels `subscriptions` once this thread's ``withContainer(_:)`` has unlocked (see the type's comment).
    @usableFromInline
    func cancelAfterUnlocking(_ subscriptions: [Subscription]) {
        cancellationsLeft.withLock { $0 = subscriptions }
        hasCancellationsLeft.store(true, ordering: .relaxed)
    }

    /// Stops the process with a message if this thread is inside the container's `update` body, which holds the
    /// container's lock: what it would wait for (that lock, or this link's, whose holder may be waiting for that
    /// one) never comes.
    /// - Parameter thread: The calling thread's identity.
    @usableFromInline
    func refuseUseInsideUpdate(on thread: UInt = currentThreadIdentity()) {
        guard updatingThread.load(ordering: .relaxed) == thread else { return }
        preconditionFailure(
            "Statehouse: the update body of the container \(String(reflecting: key)) used that same container. "
                + "The body runs with the container locked: change the value through the body's inout argument, "
                + "and read anything else it needs before calling update."
        )
    }
}
