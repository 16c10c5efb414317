import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Every construct in Statehouse that steps outside what Swift checks — underscored standard-library API, raw memory,
// unchecked exclusivity — is here or listed here, each with why it is needed, what it saves, and what would break
// it (and which test would see the break). The code elsewhere calls these functions and says what it does, not what
// it costs. Measured with `Benchmarks/instructions.sh` (callgrind) on Linux, Swift 6.3, release.
//
// Listed, not wrapped, because they are attributes or declarations rather than calls:
//
// - `@exclusivity(unchecked)` on `StoreSubscriptionBase.group` and `.slot` and on `SelectionGroup.subscribers` and
//   `LastSelection.value`. Why: class properties are checked dynamically for overlapping accesses, a record and a
//   lookup per access; these are touched on every dispatch and subscribe, always on the store's worker or under the
//   store's lock, which already excludes overlapping accesses. Saves about 30 instructions per group and dispatch,
//   350 per store subscribe + cancel. Breaks if one of them is accessed off the worker and outside the lock: the
//   ThreadSanitizer suite would report it.
// - `nonisolated(unsafe)` on `ObservationAnchor.keyPath`: `KeyPath` is not `Sendable`, but a key path is immutable.
//   A stored key path is built once; a literal is looked up on every use (about 130 instructions).
// - `TrackedReadProbe` (ObservationGate.swift) relies on behaviour Observation does not document: a tracked read
//   hashes the key path it reports, so the probe's count tells a tracked read from an untracked one, and an
//   untracked container skips the registrar's `willSet`/`didSet` (which cost more than the rest of a `modify`).
//   Breaks if Observation stops hashing key paths as they are read: `ObservationGateTests` would fail at once.

// MARK: - Locking a `Mutex` without an access to its value

extension Mutex where Value == Void {
    /// Locks without beginning an access to the mutex's value.
    ///
    /// Why: `Locked` keeps its state in a cell of its own and tells ThreadSanitizer about the lock (see `Locked`);
    /// `withLock` would begin an access to the `Void` value that ThreadSanitizer reports as a race on Linux, where it
    /// cannot see the futex. Breaks if the underscored API is removed or renamed: the build fails.
    @inlinable @inline(__always)
    func lockWithoutAccess() {
        _unsafeLock()
    }

    /// Tries to lock without beginning an access; `false` if the lock is held. See ``lockWithoutAccess()``.
    @inlinable @inline(__always)
    func tryLockWithoutAccess() -> Bool {
        _unsafeTryLock()
    }

    /// Unlocks what ``lockWithoutAccess()`` or ``tryLockWithoutAccess()`` locked.
    @inlinable @inline(__always)
    func unlockWithoutAccess() {
        _unsafeUnlock()
    }
}

// MARK: - Using an object without retaining it

extension Unmanaged {
    /// Runs `body` with the object, neither retained nor released around the call.
    ///
    /// Why: a listener's subscription, a container's link and a store subscription's store are used on every
    /// delivery and cancellation while something else is known to keep them alive (the table entry's `unowned(safe)`
    /// reference keeps the memory; the caller's own reference keeps the object). A retain and release pair costs
    /// about 34 of the 1,127 instructions of a container subscribe + cancel. Breaks if the object can die during
    /// `body`: the use-after-free would show under AddressSanitizer and as a crash in the deallocation tests.
    @inlinable @inline(__always)
    func withoutRetaining<Result>(_ body: (Instance) throws -> Result) rethrows -> Result {
        try _withUnsafeGuaranteedRef(body)
    }
}

// MARK: - The address an `unowned(safe)` reference stores

/// The object whose `unowned(safe)` reference is the first stored property of `holder`, read as an address without
/// loading the reference.
///
/// Why: loading an `unowned(safe)` reference checks that the object still lives and traps if it does not; an
/// observer table's entry must reach a subscription that may already be deinitialized (its memory kept by that
/// reference) to see that it was cancelled. A second, `unowned(unsafe)` field would cost 8 bytes per listener.
/// Relies on a native Swift `unowned(safe)` reference storing the object's address: `ObserverTableTests` checks it,
/// and fails at once if a runtime changes that representation.
@inlinable @inline(__always)
func objectOfFirstUnownedReference<Holder, Object: AnyObject>(
    in holder: Holder, as _: Object.Type
) -> Unmanaged<Object> {
    withUnsafeBytes(of: holder) { Unmanaged.fromOpaque($0.load(as: UnsafeRawPointer.self)) }
}

// MARK: - A stored property read by its offset

/// The `Value` stored at `offset` bytes into `root`.
///
/// Why: reading a selection through a key path walks its components and looks up generic metadata on every read
/// (about 400 instructions for a struct's `Int` property); a store subscriber's selector reads one on every change.
/// `MemoryLayout.offset(of:)` gives the offset only for a stored property reachable without computation, and the
/// caller uses this only then. Breaks if it is called with an offset not from `MemoryLayout<Root>.offset(of:)`.
@inlinable @inline(__always)
func storedProperty<Root, Value>(of root: Root, atOffset offset: Int, as _: Value.Type) -> Value {
    withUnsafeBytes(of: root) { $0.load(fromByteOffset: offset, as: Value.self) }
}

// MARK: - A C function found at run time

#if os(Linux)
/// The C function named `name` in the running process, as `Function`; `nil` if the process has none.
///
/// Why: ThreadSanitizer's annotations exist only when its runtime is linked in; looking them up lets one build run
/// with or without it (see `ThreadSanitizer`). Breaks if `Function` does not match the C function's signature:
/// a call would crash, in the ThreadSanitizer suite at once.
func cFunction<Function>(named name: String, as _: Function.Type) -> Function? {
    guard let symbol = dlsym(nil, name) else { return nil }
    return unsafeBitCast(symbol, to: Function.self)
}
#endif
