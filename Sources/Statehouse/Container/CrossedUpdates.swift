#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
/// Only a thread inside an `update` body holds a container's lock while it runs other code, so only such a thread
/// can be part of a circle: when one finds a container locked, it registers the container it waits for, and walks
/// from it: the thread inside that container's body, the container that thread waits for, and so on. Reaching itself
/// closes a circle. The walk reads the holders as they are now, under this registry's lock: every thread of a
/// circle registered before it blocked, and the last one to arrive finds all the others there. Each edge is true at
/// that instant (a waiter leaves the registry as soon as it has the lock, and a thread clears its mark on a container
/// before it unlocks it), so a circle found is a real deadlock, never a wait that was about to end.
@usableFromInline
enum CrossedUpdates {
    private static let waits = Locked<[UInt: any UpdatingContainer]>([:])

    /// Registers that this thread, inside an `update` body, is about to wait for `container`; stops the process if
    /// that wait closes a circle.
    /// - Parameter bodiesOfItsOwn: The bodies the thread counted that hold no lock yet (an `update` waiting for its
    ///   own container's lock).
    /// - Returns: Whether this thread was registered: then call ``didWait()`` once it has the lock.
    static func willWait(for container: some UpdatingContainer, bodiesOfItsOwn: Int) -> Bool {
        guard UpdateBodyDepth.counter.pointee > bodiesOfItsOwn else { return false }
        let me = currentThreadIdentity()
        let circle: [String]? = waits.withLock { waits in
            waits[me] = container
            var keys: [String] = []
            var wanted: any UpdatingContainer = container
            // Each thread waits for at most one container: a circle is at most as long as the registry.
            for _ in 0...waits.count {
                keys.append(wanted.keyDescription)
                let holder = wanted.threadInsideUpdate
                if holder == me { return keys }
                guard holder != 0, let next = waits[holder] else { return nil }
                wanted = next
            }
            return nil
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
        return true
    }

    /// This thread has the lock it waited for.
    @usableFromInline
    static func didWait() {
        let me = currentThreadIdentity()
        waits.withLock { _ = $0.removeValue(forKey: me) }
    }
}

/// How many `update` bodies the calling thread is inside (they nest: `a.update { b.update { … } }`).
///
/// ``CrossedUpdates`` needs it only when a lock is contended, but it is kept on every `update`, so it must cost next
/// to nothing: a counter of the thread's own, found through a pthread key once made (`pthread_getspecific` is a load
/// from the thread's block; setting a key is dearer), freed with the thread. `update` counts itself before it takes
/// its container's lock, so that nothing is added to the critical section.
@usableFromInline
enum UpdateBodyDepth {
    @usableFromInline static let key: pthread_key_t = {
        var key = pthread_key_t()
        let made = pthread_key_create(&key) { counter in counter?.deallocate() }
        precondition(made == 0, "Statehouse: no thread-specific key left")
        return key
    }()

    @inlinable
    static var counter: UnsafeMutablePointer<Int> {
        if let counter = pthread_getspecific(key) { return counter.assumingMemoryBound(to: Int.self) }
        return makeCounter()
    }

    @usableFromInline
    static func makeCounter() -> UnsafeMutablePointer<Int> {
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counter.initialize(to: 0)
        pthread_setspecific(key, counter)
        return counter
    }
}
