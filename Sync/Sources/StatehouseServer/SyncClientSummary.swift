import Foundation

/// A client that pushed to a hosted store, as a dashboard shows it.
public struct SyncClientSummary: Sendable, Equatable {
    /// The name the client gave itself (a synced store makes one per outbox).
    public let name: String
    /// Up to which of its sequence numbers the store handled its actions.
    public let handledThrough: Int64
    /// When the store last committed a push of it.
    public let lastPush: Date

    package init(name: String, handledThrough: Int64, lastPush: Date) {
        self.name = name
        self.handledThrough = handledThrough
        self.lastPush = lastPush
    }
}
