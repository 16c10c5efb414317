#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether this process runs under ThreadSanitizer (`swift test --sanitize=thread`), as the library itself finds out:
/// its runtime's hooks are linked in.
///
/// For hammers whose threads spin: instrumented, on two cores, beside the rest of the suite, one such test took five
/// minutes, the whole ThreadSanitizer run's length. They run fewer rounds there; the plain run keeps them all.
public let isUnderThreadSanitizer: Bool = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire") != nil
