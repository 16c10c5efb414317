/// What a ``SyncServer`` accepts from one request or one follower; past these it answers 413, or cuts a slow
/// follower off (it reconnects where it left off).
public struct SyncLimits: Sendable {
    /// The largest request body, in bytes.
    public var maximumBody: Int
    /// The most actions one push may carry.
    public var maximumBatch: Int
    /// How many events wait for a follower that reads slower than they come before it is cut off.
    public var followerBuffer: Int
    /// How often a quiet feed sends a comment, so that proxies keep it open and a vanished client is noticed.
    public var heartbeat: Duration
    /// How many clients a store keeps a sequence number for: the server holds one per client name in memory, and
    /// a token that may push could otherwise make it hold any number. A new client past it is answered 429.
    public var maximumClients: Int

    public init(
        maximumBody: Int = 4 << 20, maximumBatch: Int = 1_000, followerBuffer: Int = 256,
        heartbeat: Duration = .seconds(15), maximumClients: Int = 100_000
    ) {
        self.maximumBody = maximumBody
        self.maximumBatch = maximumBatch
        self.followerBuffer = followerBuffer
        self.heartbeat = heartbeat
        self.maximumClients = maximumClients
    }
}
