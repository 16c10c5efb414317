import Foundation

/// How a ``SyncedStore`` stands with its server.
public enum SyncStatus: Sendable, Equatable {
    /// Every action is in the server's state, and the store shows the server's latest.
    case synced
    /// This many actions wait to be pushed or to be seen in the server's state.
    case pending(Int)
    /// The server cannot be reached since `since`; the next try is at `retryingAt`. Actions keep working locally.
    case offline(since: Date, retryingAt: Date)
    /// The server handled these actions without applying them (its `authorize` hook or its reducer said no): they
    /// left the outbox and the store shows the state without them. Stays, gathering later refusals, until the app
    /// calls ``SyncedStore/acknowledgeRefusals()``.
    case refused([SyncRefusal])
    /// The server refuses to go on (a token it does not know, a store it does not host): trying again will not
    /// help until what the error says is fixed. Actions keep working locally and stay in the outbox.
    case failed(SyncError)
}

/// An action the server refused, and why.
public struct SyncRefusal: Sendable, Equatable {
    /// The action's sequence number in this outbox.
    public let seq: Int64
    /// The action as the app's `description` of it shows it.
    public let action: String
    public let reason: String
}

extension SyncStatus {
    /// Whether both are the same case, whatever their details (`.pending(1)` and `.pending(2)` are).
    func isSameKind(as other: SyncStatus) -> Bool {
        switch (self, other) {
        case (.synced, .synced), (.pending, .pending), (.offline, .offline), (.refused, .refused): true
        case (.failed(let one), .failed(let other)): one == other
        default: false
        }
    }
}
