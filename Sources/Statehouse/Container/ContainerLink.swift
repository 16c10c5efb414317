import Synchronization

/// A container's state and its lock, in an object the container shares with its subscriptions: how they leave the
/// container without keeping it alive.
///
/// A subscription outlives its container when its token does, so leaving must find out whether the container still
/// lives. Two earlier ways cost too much:
/// - A `weak` reference to the container gives it a side table for good, and from then on every retain and release
///   of it takes the runtime's slow path.
/// - A reference the container cannot see, borrowed under a lock of this object's own, cost a second lock and a
///   retain and a release of the container per cancellation. Without that retain, the thread borrowing could end up
///   holding the container's last reference.
///
/// Here the state itself is shared: the container's `deinit` takes it out under its lock (``end()``), and a
/// subscription leaving finds either the state, which it changes under that same lock, or `nil`. It never touches
/// the container: one lock, and no reference count of the container.
///
/// It also marks the thread running the container's ``StateContainer/update(_:)`` body, so that a thread finding the
/// lock taken can check it before it waits (see ``locked(forUpdate:_:)``).
@usableFromInline
final class ContainerLink<Value: Sendable>: Sendable {
    /// The container's state; `nil` once the container ended.
    @usableFromInline let state: Locked<ContainerState<Value>?>
    /// The thread running the container's ``StateContainer/update(_:)`` body, 0 when none.
    @usableFromInline let updatingThread = Atomic<UInt>(0)
    /// Removes a cancelled listener, and lets go of its entry once the lock is released (see
    /// `ObserverTable.remove`).
    ///
    /// A closure made by the container's inlined initializer, so it runs code specialized for `Value`: a method
    /// called from `SubscriptionToken.cancel()` would run generic code, ten times slower. It lets go of the entry
    /// itself for the same reason: handed back to the unspecialized caller, the entry would be destroyed through its
    /// metadata.
    @usableFromInline typealias Remover = @Sendable (ContainerLink<Value>, ContainerSubscription<Value>) -> Void
    @usableFromInline let removeListener: Remover
    /// The container's key, for messages.
    private let key: String

    @usableFromInline
    init(
        key: String,
        state: ContainerState<Value>,
        removeListener: @escaping Remover
    ) {
        self.key = key
        self.state = Locked(state)
        self.removeListener = removeListener
    }

    /// Runs `body` under the lock, on the state or on `nil` if the container ended. When the lock is held, makes
    /// sure first that waiting for it can end: this thread must not be inside an `update` body of this container
    /// (which holds the lock already), nor of a container whose lock the thread inside this one's `update` body
    /// waits for (see ``CrossedUpdates``).
    ///
    /// - Parameter forUpdate: Whether the lock is taken for an ``StateContainer/update(_:)``, which has already
    ///   counted itself in ``UpdateBodyDepth`` although its body has not started: only the bodies around it hold
    ///   locks.
    @inlinable
    func locked<Result: Sendable>(
        forUpdate: Bool = false, _ body: (inout ContainerState<Value>?) -> Result
    ) -> Result {
        var waitsForAnUpdate = false
        return state.withLock(
            whenContended: { waitsForAnUpdate = refuseWaitThatCannotEnd(bodiesOfItsOwn: forUpdate ? 1 : 0) },
            afterWaiting: { if waitsForAnUpdate { CrossedUpdates.didWait() } }
        ) { body(&$0) }
    }

    /// Takes the state out, for the container's `deinit`: from now on, ``locked(forUpdate:_:)`` finds `nil`.
    func end() -> ContainerState<Value>? {
        locked { $0.take() }
    }

    /// Fails with a message if this thread is inside this container's `update` body, or if waiting for this
    /// container would close a circle of `update` bodies waiting for one another.
    /// - Parameter bodiesOfItsOwn: The bodies this thread counted that hold no lock yet (its own `update`'s).
    /// - Returns: Whether this thread now counts as waiting (then call `CrossedUpdates.didWait()` once it has the
    ///   lock).
    @usableFromInline
    func refuseWaitThatCannotEnd(bodiesOfItsOwn: Int) -> Bool {
        refuseUseInsideUpdate()
        return CrossedUpdates.willWait(for: self, bodiesOfItsOwn: bodiesOfItsOwn)
    }

    /// Stops the process with a message if this thread is inside the container's `update` body, which holds the
    /// container's lock: waiting for it would never end.
    @usableFromInline
    func refuseUseInsideUpdate() {
        guard updatingThread.load(ordering: .relaxed) == currentThreadIdentity() else { return }
        preconditionFailure(
            "Statehouse: the update body of the container \(String(reflecting: key)) used that same container. "
                + "The body runs with the container locked: change the value through the body's inout argument, "
                + "and read anything else it needs before calling update."
        )
    }
}

extension ContainerLink: UpdatingContainer {
    var threadInsideUpdate: UInt { updatingThread.load(ordering: .relaxed) }
    var keyDescription: String { String(reflecting: key) }
}
