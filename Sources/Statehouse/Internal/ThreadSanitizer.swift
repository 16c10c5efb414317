#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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

    @usableFromInline static let hooks: Hooks? = {
        #if os(Linux)
        guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else {
            return nil
        }
        return Hooks(
            acquire: unsafeBitCast(acquire, to: Hook.self),
            release: unsafeBitCast(release, to: Hook.self)
        )
        #else
        return nil
        #endif
    }()

    /// Whether the process runs under ThreadSanitizer (its runtime's hooks are linked in).
    package static var isActive: Bool { hooks != nil }
}
