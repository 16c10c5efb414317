import Statehouse

/// Whether this process runs under ThreadSanitizer (`swift test --sanitize=thread`), as the library finds out.
///
/// For hammers whose threads spin: instrumented, on two cores, beside the rest of the suite, one such test took five
/// minutes, the whole ThreadSanitizer run's length. They run fewer rounds there; the plain run keeps them all.
public let isUnderThreadSanitizer = ThreadSanitizer.isActive
