import Dispatch

/// Where a listener is called.
public enum Delivery: Sendable {
    /// On a thread that is changing the container, one call at a time: the default for closures.
    ///
    /// Exactly where:
    /// - When the container is idle, on the thread that made the change, before `modify` (or `update`, or
    ///   `dispatch` for a store) returns.
    /// - A change a listener makes from inside its call (re-entrancy) is delivered on that same thread once the
    ///   current round has reached every listener, still before the outermost changing call returns — unless
    ///   changes from other threads queued ahead of it used up this thread's share (below).
    /// - A change made while another thread is delivering is handed to that thread, and the changing call returns
    ///   at once, before its listeners run. Such changes queue up coalesced: listeners get the latest value, so
    ///   under contention they may skip intermediate values, never see them out of order, and always get the last.
    /// - A thread delivers at most a few rounds for other threads; then a background thread takes over, so that
    ///   no caller waits for other threads' changes without bound.
    ///
    /// Deliveries are serialized whatever the threads: a listener's calls never overlap and never go backwards.
    case synchronous
    /// Asynchronously on `queue`, in the order of the changes even if `queue` is concurrent.
    case queue(DispatchQueue)
    /// Asynchronously on the main actor, in order. Something must run the main queue: an app's run loop,
    /// `dispatchMain()`, or an async `main`.
    case mainActor
}
