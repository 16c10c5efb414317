/// A store's state as the server holds it: `GET /stores/{name}`, and the `snapshot` event that starts a feed.
///
/// `handledThrough` is the asking client's (0 unless the client belongs to the asking token): every one of its
/// actions up to it is in `state` or was refused.
public struct StoreSnapshot<State: Codable & Sendable>: Codable, Sendable {
    public var cursor: Int64
    public var state: State
    public var handledThrough: Int64

    public init(cursor: Int64, state: State, handledThrough: Int64) {
        self.cursor = cursor
        self.state = state
        self.handledThrough = handledThrough
    }
}

/// A `change` event of a store's feed: the state after one push. Its cursor is the event's `id:`, which a
/// reconnecting client sends back as `Last-Event-ID`.
///
/// `handledThrough` is there only in the feeds of the client that pushed: every one of its actions up to it is in
/// `state` or was refused. Other followers learn neither the client's name nor its numbers.
public struct StoreChange<State: Codable & Sendable>: Codable, Sendable {
    public var cursor: Int64
    public var state: State
    public var handledThrough: Int64?

    public init(cursor: Int64, state: State, handledThrough: Int64? = nil) {
        self.cursor = cursor
        self.state = state
        self.handledThrough = handledThrough
    }
}

/// The names of a feed's events, as they follow `event:`.
public enum FeedEvent {
    public static let snapshot = "snapshot"
    public static let change = "change"
}
