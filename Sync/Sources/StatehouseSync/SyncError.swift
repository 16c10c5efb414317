/// Why a ``SyncedStore`` cannot sync, or cannot start.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another ``SyncedStore`` (in this process or another) uses this outbox: two would number their actions alike.
    case outboxInUse(path: String)
    /// A store's name is 1 to 64 characters of `A-Z a-z 0-9 . _ -`: it names files in the outbox and a route.
    case badStoreName(String)
    /// The outbox's folder cannot be created or locked.
    case outboxUnusable(path: String, reason: String)
    /// The server answered with a status that trying again will not change (401, 403, 404, 400, 413 …).
    case refusedByServer(status: Int, message: String)
    /// The server cannot be reached, or answered 5xx or garbage: a passing state, tried again with back-off.
    case unreachable(String)
    /// The outbox could not be written before a push. Actions are pushed only once saved: pushed first and lost in
    /// a crash, their numbers would be given again to other actions, which the server would skip as replays.
    case outboxNotSaved(String)
    /// An action of the outbox cannot be encoded (its `Encodable` conformance threw): it cannot be pushed.
    case actionNotEncodable(seq: Int64, reason: String)
    /// The outbox holds as many actions as it may (the synced store's `outboxLimit`): new actions are not applied
    /// until the server takes some.
    case outboxFull(limit: Int)

    public var description: String {
        switch self {
        case .outboxInUse(let path):
            "The outbox \(path) is in use by another synced store; give each its own folder."
        case .badStoreName(let name):
            "\(name.debugDescription) cannot name a synced store: use 1 to 64 characters of A-Z a-z 0-9 . _ -."
        case .outboxUnusable(let path, let reason):
            "The outbox \(path) cannot be used: \(reason)"
        case .refusedByServer(let status, let message):
            "The server refused the request (\(status)): \(message)\(Self.advice(for: status))"
        case .unreachable(let reason):
            "The server cannot be reached: \(reason)"
        case .outboxNotSaved(let reason):
            "The outbox could not be saved, so nothing is pushed until it is: \(reason)"
        case .actionNotEncodable(let seq, let reason):
            "Action \(seq) of the outbox cannot be encoded, so it and those after it cannot be pushed: \(reason)"
        case .outboxFull(let limit):
            "The outbox holds \(limit) actions, its limit: new actions are not applied until the server can be reached and takes them."
        }
    }

    /// Whether trying again may help.
    var isPassing: Bool {
        if case .unreachable = self { true } else { false }
    }

    private static func advice(for status: Int) -> String {
        switch status {
        case 401: " Check the token."
        case 403: " The token may not use this store: ask for one that may."
        case 404: " The server does not host this store: check its name."
        case 413: " One action is larger than the server accepts: raise its maximumBody."
        default: ""
        }
    }
}
