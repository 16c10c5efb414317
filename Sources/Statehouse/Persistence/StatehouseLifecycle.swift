import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's end, as persisted containers and stores see it.
///
/// A normal exit (`exit()`, returning from `main`) writes every pending change by itself. A signal that ends the
/// process does not run exit handlers: the changes still inside a coalescing window would be lost. Call
/// ``flushOnTermination()`` once, at start, to keep them.
public enum StatehouseLifecycle {
    /// The read source of the signal pipe, kept for the life of the process.
    private static let reader = Mutex<(any DispatchSourceRead)?>(nil)

    /// From now on, SIGTERM and SIGINT first write every pending change of every persisted container and store, then
    /// end the process as the signal would have (the exit status says it was killed by that signal).
    ///
    /// ```swift
    /// @main struct Server {
    ///     static func main() async throws {
    ///         StatehouseLifecycle.flushOnTermination()
    ///         …
    ///     }
    /// }
    /// ```
    ///
    /// Calling it again does nothing. It replaces the handlers of both signals: a program with handlers of its own
    /// should call ``flushPendingWrites()`` from them instead. The handlers are in place when it returns. They only
    /// write the signal's number to a pipe (about all a signal handler may safely do); the writes happen on a
    /// dispatch queue that reads it, so any storage works.
    public static func flushOnTermination() {
        reader.withLock { reader in
            guard reader == nil else { return }
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else {
                StatehouseDiagnostics.report(.terminationHandling(errno: errno))
                return
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            signalPipe.store(ends[1], ordering: .sequentiallyConsistent)
            let source = DispatchSource.makeReadSource(
                fileDescriptor: ends[0], queue: DispatchQueue(label: "Statehouse.termination")
            )
            source.setEventHandler {
                var received: UInt8 = 0
                guard read(ends[0], &received, 1) == 1 else { return }
                flushPendingWrites()
                let signalNumber = Int32(received)
                signal(signalNumber, SIG_DFL)
                // To the process, not this thread: dispatch's threads block signals, so `raise` would leave it
                // pending here forever.
                kill(getpid(), signalNumber)
            }
            source.resume()
            reader = source
            // A process may start with the signals blocked (a parent's mask survives exec, and dispatch's threads
            // block every signal, so children spawned from them inherit that): unblock them here too.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            for signalNumber in [SIGTERM, SIGINT] {
                sigaddset(&unblocked, signalNumber)
                signal(signalNumber, forwardToPipe)
            }
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        }
    }

    /// Writes every pending change of every persisted container and store now, and waits until they are written.
    /// Failures are reported as ``StatehouseDiagnostic/Kind/lostWrite``.
    public static func flushPendingWrites() {
        PendingWrites.shared.flushAll()
    }
}

/// The write end of the signal pipe, for the signal handler: an atomic load is safe in a handler, a lock is not.
private let signalPipe = Atomic<Int32>(-1)

/// The handler of SIGTERM and SIGINT: passes the signal's number on to the pipe's reader.
private func forwardToPipe(_ signalNumber: Int32) {
    // The interrupted code may be about to read `errno`: a handler must leave it as it found it.
    let savedErrno = errno
    defer { errno = savedErrno }
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(signalPipe.load(ordering: .sequentiallyConsistent), &byte, 1)
}
