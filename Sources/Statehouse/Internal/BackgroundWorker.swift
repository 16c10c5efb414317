import Dispatch

/// Runs the rest of a store's or a container's queued work on a background thread, after a caller did its share.
///
/// On a serial queue of its own, made for the one hand-off, rather than on `DispatchQueue.global()`: a serial queue
/// runs on libdispatch's overcommitting pool, which starts a thread when none is free, while the global queue has
/// about one thread per core and shares them with every blocked block and, on Linux, with Swift's tasks. There the
/// rest of a store's actions once waited more than a minute behind blocked work (ThreadSanitizer, two cores).
@usableFromInline
func runInBackground(_ work: @escaping @Sendable () -> Void) {
    DispatchQueue(label: "Statehouse.background").async(execute: work)
}
