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

    public init(
        maximumBody: Int = 4 << 20, maximumBatch: Int = 1_000, followerBuffer: Int = 256,
        heartbeat: Duration = .seconds(15)
    ) {
        self.maximumBody = maximumBody
        self.maximumBatch = maximumBatch
        self.followerBuffer = followerBuffer
        self.heartbeat = heartbeat
    }
}
