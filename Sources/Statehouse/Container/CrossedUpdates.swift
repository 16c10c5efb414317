/// A container whose ``StateContainer/update(_:)`` body a thread may be running, as ``CrossedUpdates`` sees it.
protocol UpdatingContainer: AnyObject, Sendable {
    /// The thread inside this container's `update` body, 0 when none.
    var threadInsideUpdate: UInt { get }
    /// The container's key, as a message names it.
    var keyDescription: String { get }
}

/// Finds `update` bodies that wait for one another's containers (`a.update { b.value }` on one thread while
/// `b.update { a.value }` runs on another), so that the process stops with a message naming the containers instead
/// of hanging, or of the lock's "Recursive call to lock Mutex" (Linux's futex lock reports a circle of waiters so).
///
/// Only a thread that finds a container locked by a thread inside that container's `update` body comes here, so a
/// program whose update bodies touch no other container never does. A circle is reported only if every wait in it
/// holds at one instant, under this registry's lock: a waiter registers before it blocks and leaves once it has the
/// lock, and a container's thread inside `update` is cleared before that thread unlocks it, so a wait that has ended
/// (the holder left its body) no longer counts.
@usableFromInline
enum CrossedUpdates {
    private struct Wait {
        let container: any UpdatingContainer
        let holder: UInt

        /// Whether `holder` is still inside the `update` body of `container`, so still holds its lock.
        var holds: Bool { container.threadInsideUpdate == holder }
    }

    private static let waits = Locked<[UInt: Wait]>([:])

    /// Registers that this thread is about to wait for `container`, whose `update` body `holder` runs; stops the
    /// process if `holder` waits, directly or through others, for this thread.
    /// - Returns: Whether this thread was registered: then call ``didWait()`` once it has the lock.
    static func willWait(for container: some UpdatingContainer, heldBy holder: UInt) -> Bool {
        let me = currentThreadIdentity()
        let (registered, circle): (Bool, [String]?) = waits.withLock { waits in
            let wait = Wait(container: container, holder: holder)
            guard wait.holds else { return (false, nil) }
            waits[me] = wait
            var keys = [container.keyDescription]
            var thread = holder
            // Each thread waits for at most one container: a circle is at most as long as the registry.
            for _ in 0...waits.count {
                if thread == me { return (true, keys) }
                guard let next = waits[thread], next.holds else { break }
                keys.append(next.container.keyDescription)
                thread = next.holder
            }
            return (true, nil)
        }
        if let circle {
            preconditionFailure(
                "Statehouse: update bodies on \(circle.count) threads wait for one another's containers ("
                    + (circle + [circle[0]]).joined(separator: " → ")
                    + "): each body uses the container whose update body runs on the next thread, so none can go on. "
                    + "An update body must not use a container another thread may be updating: read what it needs "
                    + "before calling update."
            )
        }
        return registered
    }

    /// This thread has the lock it waited for.
    @usableFromInline
    static func didWait() {
        let me = currentThreadIdentity()
        waits.withLock { _ = $0.removeValue(forKey: me) }
    }
}
