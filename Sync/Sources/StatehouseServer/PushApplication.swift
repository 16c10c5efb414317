import Foundation
import StatehouseSyncWire

/// A hosted store's state machine: the state, its cursor, and each client's last handled sequence number, with what
/// a push does to them. No locks, no I/O: ``HostedStore`` serializes pushes and commits what this computes.
package struct LiveStore<State: Codable & Sendable, Action: Codable & Sendable>: Sendable, Codable {
    package var state: State
    /// How many actions the store has applied; a feed's event ids.
    package var cursor: Int64
    package var clients: [String: PushingClient]

    package init(state: State, cursor: Int64, clients: [String: PushingClient]) {
        self.state = state
        self.cursor = cursor
        self.clients = clients
    }

    package func handledThrough(_ client: String) -> Int64 {
        clients[client]?.handledThrough ?? 0
    }

    /// How far the store handled the caller's client's actions, told only to the token the client belongs to.
    package func handledThrough(of caller: SyncCaller) -> Int64 {
        clients[caller.client].flatMap { $0.token == caller.token ? $0.handledThrough : nil } ?? 0
    }

    /// What a push did: the store after it, and what to commit and answer. `nil` answer parts mean nothing changed.
    package struct Outcome {
        package var store: LiveStore
        package var applied: [(seq: Int64, action: Action)]
        package var refused: [(seq: Int64, action: Action, reason: String)]
        /// Whether the client's sequence number moved: something must be committed.
        package var handledMore: Bool
    }

    /// Applies the actions of `request` this store has not handled yet, in order, each to a copy of the state so that
    /// a reducer that throws halfway leaves nothing behind.
    ///
    /// - Throws: ``PushFailure`` when the batch is refused whole (nothing changes): a client name another token
    ///   pushed first, sequence numbers that do not rise by one, or a first one past the next expected (a hole: the
    ///   client lost actions the server never saw).
    package func applying(
        _ request: PushRequest<Action>,
        token: String,
        maximumClients: Int,
        authorize: (PushedAction<Action>) -> SyncVerdict,
        reducer: (inout State, Action) throws -> Void
    ) throws(PushFailure) -> Outcome {
        let known = clients[request.client]
        let handled = known?.handledThrough ?? 0
        // A client's numbers are its own: another token pushing under its name would have the client's next action
        // skipped as a replay.
        if let known, known.token != token {
            throw .forbidden("The client \(request.client) pushes with another token.")
        }
        guard let first = request.actions.first else {
            return Outcome(store: self, applied: [], refused: [], handledMore: false)
        }
        guard known != nil || clients.count < maximumClients else {
            throw .tooManyClients("The store keeps at most \(maximumClients) clients.")
        }
        // Checked first, so that the next check's `+ 1` cannot overflow on a number a client made up.
        guard request.actions.allSatisfy({ (1..<Int64.max).contains($0.seq) }) else {
            throw .badRequest("Sequence numbers are whole numbers from 1 to \(Int64.max - 1).")
        }
        for (earlier, later) in zip(request.actions, request.actions.dropFirst()) where later.seq != earlier.seq + 1 {
            throw .badRequest("Sequence numbers must rise by one within a batch: \(later.seq) follows \(earlier.seq).")
        }
        guard first.seq <= handled + 1 else { throw .gap(handledThrough: handled) }

        var next = self
        var applied: [(seq: Int64, action: Action)] = []
        var refused: [(seq: Int64, action: Action, reason: String)] = []
        for pushed in request.actions where pushed.seq > handled {
            if case .refuse(let reason) = authorize(pushed) {
                refused.append((pushed.seq, pushed.action, reason))
            } else {
                var changed = next.state
                do {
                    try reducer(&changed, pushed.action)
                    next.state = changed
                    next.cursor += 1
                    applied.append((pushed.seq, pushed.action))
                } catch let unavailable as SyncUnavailable {
                    throw .unavailable(unavailable.reason)
                } catch {
                    refused.append((pushed.seq, pushed.action, "The reducer refused it: \(error)"))
                }
            }
            next.clients[request.client] = PushingClient(handledThrough: pushed.seq, token: token)
        }
        return Outcome(
            store: next, applied: applied, refused: refused,
            handledMore: next.handledThrough(request.client) != handled
        )
    }
}

/// A client that pushed to a store: how far the store handled its actions, and the name of the token it pushed with
/// first, the only one that may push as it.
package struct PushingClient: Sendable, Equatable, Codable {
    package var handledThrough: Int64
    package var token: String

    package init(handledThrough: Int64, token: String) {
        self.handledThrough = handledThrough
        self.token = token
    }
}

/// Why a push was refused whole.
package enum PushFailure: Error, Equatable {
    case badRequest(String)
    /// The client name belongs to another token.
    case forbidden(String)
    /// The batch starts past the next sequence number the server expects.
    case gap(handledThrough: Int64)
    /// An action pushed again differs from the one the server handled under its number: the outbox was restored
    /// from an older copy, or two apps share a client name.
    case replayDiffers(seq: Int64, handledThrough: Int64)
    case tooLarge(String)
    /// A new client, past ``SyncLimits/maximumClients``.
    case tooManyClients(String)
    /// The storage failed; nothing was applied, the client pushes again later.
    case unavailable(String)
}

/// What a hosted store's reducer throws when it cannot apply an action now (the app's database is locked or
/// failing): the push is answered 503 and nothing of it counts, so the client pushes it again later. Any other error
/// refuses the action for good.
public struct SyncUnavailable: Error, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// What a store's `authorize` hook says of an action.
public enum SyncVerdict: Sendable, Equatable {
    case allow
    /// The action is handled but not applied; the client is told `reason` and drops it.
    case refuse(String)
}

extension PushRequest {
    /// The batch in a push's body, if it is one a store takes: its client named as the protocol says, within the
    /// batch limit.
    package static func decoding(_ body: Data, limits: SyncLimits) throws(PushFailure) -> PushRequest {
        let request: PushRequest
        do {
            request = try JSONDecoder().decode(PushRequest.self, from: body)
        } catch {
            throw .badRequest("The body is not a batch of this store's actions: \(error)")
        }
        guard ClientID.isValid(request.client) else {
            throw .badRequest("A client names itself with 1 to 64 characters of A-Z a-z 0-9 . _ -.")
        }
        guard request.actions.count <= limits.maximumBatch else {
            throw .tooLarge("A batch holds at most \(limits.maximumBatch) actions.")
        }
        return request
    }
}
