/// The names of a container's feed events (`GET /containers/{key}/events`), as they follow `event:`. Each event's
/// `id:` is the container's version, which is also its `ETag` (`"7"`), and a reconnecting client's `Last-Event-ID`.
public enum ContainerEvent {
    /// The container holds a value: the event's `data:` is its JSON.
    public static let value = "value"
    /// Nothing is stored under the key any more.
    public static let removed = "removed"
}
