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
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

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
    /// should call ``flushPendingWrites()`` from them instead. The writes happen on a dispatch queue, not in a
    /// signal handler, so any storage works.
    public static func flushOnTermination() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            let queue = DispatchQueue(label: "Statehouse.termination")
            // A process may start with the signals blocked (a parent's mask survives exec; dispatch's threads block
            // every signal, so children spawned from them inherit that): unblock them here, or they never arrive.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            for signalNumber in [SIGTERM, SIGINT] {
                sigaddset(&unblocked, signalNumber)
            }
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
            for signalNumber in [SIGTERM, SIGINT] {
                #if canImport(Darwin)
                // Darwin's signal sources use kqueue, which sees a signal only alongside its handler: ignore it there
                // so that the default action does not end the process first. On Linux, the source installs a handler
                // of its own (and an ignored signal would never reach it).
                signal(signalNumber, SIG_IGN)
                #endif
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
                source.setEventHandler {
                    flushPendingWrites()
                    signal(signalNumber, SIG_DFL)
                    // To the process, not this thread: dispatch's threads block signals, so `raise` would leave it
                    // pending here forever.
                    kill(getpid(), signalNumber)
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Writes every pending change of every persisted container and store now, and waits until they are written.
    /// Failures are reported as ``StatehouseDiagnostic/Kind/lostWrite``.
    public static func flushPendingWrites() {
        PendingWrites.shared.flushAll()
    }
}
