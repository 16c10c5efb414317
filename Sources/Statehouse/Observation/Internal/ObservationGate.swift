import Observation
import Synchronization

/// A container's or a store's `ObservationRegistrar`, told of changes only once a tracked read has happened.
///
/// `willSet` and `didSet` cost more than the rest of a `modify` (they lock the registrar and look the key path up),
/// whether or not anything tracks the owner. No public API says whether a read is tracked, but a tracked read is
/// the only kind that hashes the key path it reports (`withObservationTracking`, SwiftUI and `Observations` keep the
/// key paths read in a set, then register them with the registrar): the reported key path has a subscript whose
/// index counts its hashings (``TrackedReadProbe``), so a read that changed the count was tracked, and the owner
/// reports every change from then on.
///
/// No change is missed that the plain registrar would report. A tracked read sets ``isTracked`` before it reads the
/// value, and registers its tracking only after. A change checks the flag before it changes the value and again
/// after: a tracked read that began in between (the changing thread may be preempted there) may have read the
/// value before the change, so the change is reported then, late, rather than not at all. The late report reaches
/// every tracking registered before it, so every one the plain registrar's earlier `willSet` would have reached;
/// a change that finds the flag clear both times ended before any tracked read began. The flag never goes back.
/// `ObservationGateTests` hammers the first tracked read against a writer, and would fail at once if a later
/// Observation stopped hashing key paths as they are read.
@usableFromInline
struct ObservationGate: ~Copyable, Sendable {
    /// Whether a tracked read has happened: from then on, changes are reported to ``registrar``. First, so that its
    /// offset is known without the metadata of the registrar, a type of another module whose layout may change.
    @usableFromInline let isTracked = Atomic<Bool>(false)
    @usableFromInline let registrar = ObservationRegistrar()

    @usableFromInline init() {}

    /// Reports a read of the owner's value; marks the owner tracked if the read is.
    @inlinable @inline(__always)
    func accessed() {
        if isTracked.load(ordering: .relaxed) {
            return registrar.accessed()
        }
        let hashings = TrackedReadProbe.hashings.load(ordering: .relaxed)
        registrar.accessed()
        // Another thread's tracked read may have counted too: then this owner reports changes it did not need to,
        // which costs time, never a notification.
        if TrackedReadProbe.hashings.load(ordering: .relaxed) != hashings {
            isTracked.store(true, ordering: .sequentiallyConsistent)
        }
    }

    /// Runs `change`, between the registrar's `willSet` and `didSet` if the owner is tracked; reports it after the
    /// fact if the owner became tracked while it ran.
    @inlinable @inline(__always)
    func changing<Result>(_ change: () throws -> Result) rethrows -> Result {
        guard isTracked.load(ordering: .sequentiallyConsistent) else {
            let result = try change()
            if isTracked.load(ordering: .sequentiallyConsistent) { registrar.changing {} }
            return result
        }
        return try registrar.changing(change)
    }
}

extension ObservationRegistrar {
    /// Reports a read of the value of the container or store that owns this registrar.
    @inlinable
    func accessed() {
        access(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath)
    }

    /// Runs `change` between the `willSet` and `didSet` reports of the owner's value.
    @inlinable
    func changing<Result>(_ change: () throws -> Result) rethrows -> Result {
        willSet(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath)
        defer { didSet(ObservationAnchor.shared, keyPath: ObservationAnchor.keyPath) }
        return try change()
    }
}

/// The subject and key path every container and store reports to its `ObservationRegistrar`.
///
/// A key path into the generic `StateContainer<Value>` is instantiated anew on every use (about a microsecond); a
/// key path into this non-generic class is built once. The registrar is the container's own, so the key
/// path only has to be the same for `access` and `willSet`.
@usableFromInline
final class ObservationAnchor: Observable, Sendable {
    @usableFromInline static let shared = ObservationAnchor()
    /// Stored: even a non-generic key-path literal is looked up on every use. `nonisolated(unsafe)` because `KeyPath`
    /// is not marked `Sendable`, but a key path is immutable (see `EscapeHatches.swift`).
    @usableFromInline nonisolated(unsafe) static let keyPath: KeyPath<ObservationAnchor, Void> =
        \.[probe: TrackedReadProbe()]

    @usableFromInline subscript(probe _: TrackedReadProbe) -> Void { () }

    @usableFromInline init() {}
}

/// The index of ``ObservationAnchor/keyPath``: hashing the key path hashes it, which counts in ``hashings``.
@usableFromInline
struct TrackedReadProbe: Hashable, Sendable {
    /// How many times a key path with this index was hashed, by any thread.
    @usableFromInline static let hashings = Atomic<UInt>(0)

    @usableFromInline init() {}

    @usableFromInline static func == (_: Self, _: Self) -> Bool { true }

    @usableFromInline func hash(into _: inout Hasher) {
        Self.hashings.wrappingAdd(1, ordering: .relaxed)
    }
}
