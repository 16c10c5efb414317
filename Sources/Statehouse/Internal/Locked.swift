import Synchronization

/// State guarded by a `Mutex` that ThreadSanitizer can see.
///
/// On Linux, `Synchronization.Mutex` waits and wakes in uninstrumented library code (a futex), so ThreadSanitizer
/// misses the ordering between two contended critical sections and reports every access in them as a race (a bare
/// `Mutex<[Int]>` appended to from four threads is enough). The Swift runtime solved the same problem for its own
/// futex lock by telling ThreadSanitizer about acquire and release; this type does the same. The state lives in a
/// cell of its own, touched only between the annotations: `Mutex.withLock` would begin its access to a value it
/// holds before any annotation inside the closure could run. Without ThreadSanitizer the annotations are a
/// predictable branch.
// @unchecked because of the cell pointer: its memory is owned by this value and only accessed with `mutex` held.
@usableFromInline package struct Locked<State: ~Copyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let mutex = Mutex<Void>(())
    @usableFromInline let cell: UnsafeMutablePointer<State>

    @usableFromInline
    package init(_ initialState: consuming sending State) {
        cell = UnsafeMutablePointer<State>.allocate(capacity: 1)
        cell.initialize(to: initialState)
    }

    deinit {
        cell.deinitialize(count: 1)
        cell.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable @inline(__always)
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        mutex.lockWithoutAccess()
        return try runLocked(body)
    }

    /// Runs `body` with exclusive access to the state; if the lock is held, by another thread or by this one, calls
    /// `whenContended` before waiting for it and `afterWaiting` once it has it: a cheap place to recognize misuse,
    /// since an uncontended try-lock costs what a lock does.
    @inlinable @inline(__always)
    package borrowing func withLock<Result: ~Copyable, Failure: Error>(
        whenContended: () -> Void,
        afterWaiting: () -> Void,
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        if !mutex.tryLockWithoutAccess() {
            whenContended()
            mutex.lockWithoutAccess()
            afterWaiting()
        }
        return try runLocked(body)
    }

    /// Runs `body` on the state, then unlocks; the caller has locked `mutex`.
    @inlinable @inline(__always)
    borrowing func runLocked<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        // A local copy of the pointer: `&self.cell.pointee` would count as an access to the stored property.
        let cell = self.cell
        // Read once per critical section (see `ThreadSanitizer.hooks`).
        let sanitizer = ThreadSanitizer.hooks
        sanitizer?.acquire(cell)
        defer {
            sanitizer?.release(cell)
            mutex.unlockWithoutAccess()
        }
        return try body(&cell.pointee)
    }

    /// Runs `body` with exclusive access to the state if the lock is free now; `nil` if it is held.
    @inlinable
    package borrowing func withLockIfAvailable<Result: Sendable>(_ body: (inout sending State) -> Result) -> Result? {
        guard mutex.tryLockWithoutAccess() else { return nil }
        return runLocked { body(&$0) }
    }
}
