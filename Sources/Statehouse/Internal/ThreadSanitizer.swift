import Synchronization

/// Tells ThreadSanitizer about synchronization it cannot see, when the process runs under it.
///
/// The hooks are looked up once in the running process: they exist only when ThreadSanitizer's runtime is linked
/// in. On Apple platforms `Mutex` is an `os_unfair_lock`, which ThreadSanitizer already understands.
@usableFromInline
package enum ThreadSanitizer {
    @usableFromInline typealias Hook = @convention(c) (UnsafeRawPointer) -> Void

    @usableFromInline
    struct Hooks: Sendable {
        @usableFromInline let acquire: Hook
        @usableFromInline let release: Hook
    }

    /// The hooks, or `nil` when the process does not run under ThreadSanitizer.
    ///
    /// Read in every critical section. Without ThreadSanitizer it is one load of a statically initialized atomic,
    /// not the `swift_once` check that reading the lazily initialized `lookedUpHooks` each time would be.
    @inlinable
    static var hooks: Hooks? {
        if isKnownAbsent.load(ordering: .relaxed) { return nil }
        return lookedUpHooks
    }

    /// Set once the lookup found no hooks. Relaxed is enough: a thread that does not see it yet reads
    /// `lookedUpHooks`, which says the same.
    @usableFromInline static let isKnownAbsent = Atomic<Bool>(false)

    @usableFromInline static let lookedUpHooks: Hooks? = {
        #if os(Linux)
        guard let acquire = cFunction(named: "__tsan_acquire", as: Hook.self),
            let release = cFunction(named: "__tsan_release", as: Hook.self)
        else {
            isKnownAbsent.store(true, ordering: .relaxed)
            return nil
        }
        return Hooks(acquire: acquire, release: release)
        #else
        isKnownAbsent.store(true, ordering: .relaxed)
        return nil
        #endif
    }()

    /// Whether the process runs under ThreadSanitizer (its runtime's hooks are linked in).
    package static var isActive: Bool { hooks != nil }
}
