/// When a persisted container writes its changes to its storage.
public enum WritePolicy: Sendable, Equatable {
    /// Changes are written together, at most `window` after the first unsaved one: a burst of changes becomes one
    /// write. A hard crash (power loss, `SIGKILL`) within the window loses the changes made in it; `flush()`,
    /// deallocating the container and a normal exit of the process write them at once.
    case coalesced(window: Duration)
    /// Every change is written before the changing call returns: nothing is ever lost, at the cost of a durable
    /// write (with `fsync` for files) per change.
    case writeThrough

    /// Coalesced writes, at most 50 ms after a change.
    public static let coalesced = WritePolicy.coalesced(window: .milliseconds(50))
}
