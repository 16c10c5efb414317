/// `POST /stores/{name}/actions`: a client's actions, each with the client's sequence number.
///
/// Sequence numbers rise by one from 1 for each client, so that pushing a batch again is harmless: the server skips
/// those it has handled already, and refuses a batch that would leave a hole.
public struct PushRequest<Action: Codable & Sendable>: Codable, Sendable {
    public var client: String
    public var actions: [PushedAction<Action>]

    public init(client: String, actions: [PushedAction<Action>]) {
        self.client = client
        self.actions = actions
    }
}

/// One action of a ``PushRequest``.
public struct PushedAction<Action: Codable & Sendable>: Codable, Sendable {
    public var seq: Int64
    public var action: Action

    public init(seq: Int64, action: Action) {
        self.seq = seq
        self.action = action
    }
}

/// The answer to a push: every action up to `handledThrough` is handled (applied, or refused and listed in
/// `refused`), and the store's state now stands at `cursor`.
public struct PushAnswer: Codable, Sendable, Equatable {
    public var handledThrough: Int64
    public var refused: [Refusal]
    public var cursor: Int64

    public init(handledThrough: Int64, refused: [Refusal], cursor: Int64) {
        self.handledThrough = handledThrough
        self.refused = refused
        self.cursor = cursor
    }
}

/// An action the server handled without applying it, and why.
public struct Refusal: Codable, Sendable, Equatable {
    public var seq: Int64
    public var reason: String

    public init(seq: Int64, reason: String) {
        self.seq = seq
        self.reason = reason
    }
}

/// Every 4xx and 5xx answer's body. A push refused whole (a hole in the sequence numbers, say) also says up to
/// which sequence number the server has handled the client's actions.
public struct ErrorAnswer: Codable, Sendable, Equatable {
    public var error: String
    public var handledThrough: Int64?

    public init(error: String, handledThrough: Int64? = nil) {
        self.error = error
        self.handledThrough = handledThrough
    }
}
