import Dispatch

/// Where a listener is called.
public enum Delivery: Sendable {
    /// On the thread that made the change, before the changing call returns, unless that thread is already
    /// delivering (a listener that changes the container), in which case the change is delivered right after the
    /// current listener returns. This is the default for closures.
    case synchronous
    /// Asynchronously on `queue`, in the order of the changes even if `queue` is concurrent.
    case queue(DispatchQueue)
    /// Asynchronously on the main actor, in order. Something must run the main queue: an app's run loop,
    /// `dispatchMain()`, or an async `main`.
    case mainActor
}
