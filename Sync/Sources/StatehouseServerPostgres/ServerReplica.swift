import Foundation
import StatehouseServer
import StatehouseSyncWire

/// What every server instance on one action log holds of a hosted store, and changes only by applying the log's
/// pushes in order: the state, its cursor and each client's sequence number, as one server holds them; each client's
/// latest handled actions, to check a batch pushed again; and when each client last pushed.
struct ServerReplica<State: Codable & Sendable, Action: Codable & Sendable>: Codable, Sendable {
    var live: LiveStore<State, Action>
    /// Each client's actions from the first of its latest push on, as handled. A client pushes from the oldest action
    /// it has not seen handled, so an earlier one can come again only from an outbox restored from an older copy.
    var recent: [String: [Int64: HandledAction]] = [:]
    var lastPush: [String: Date] = [:]
    /// The client whose push was applied last, and its token: its feeds get the change with their sequence number.
    var pusher: Pusher?
    /// The last push applied, whose request the instance that took it answers once it published its change.
    var lastEntry: UUID?

    struct Pusher: Codable, Sendable {
        var client: String
        var token: String
    }

    init(initialState: State) {
        live = LiveStore(state: initialState, cursor: 0, clients: [:])
    }

    /// Applies one push as every instance does, at its place in the log: what one server checks and does with a push
    /// (``LiveStore/applying(_:token:maximumClients:authorize:reducer:)``), with the verdicts of `authorize` the
    /// instance that took it recorded. A push refused whole changes nothing.
    ///
    /// Deterministic, as a replicated store's reducer must be: it reads the replica, the push and the store's
    /// reducer only.
    mutating func apply(
        _ push: ReplicatedPush<Action>, maximumClients: Int, reducer: (inout State, Action) throws -> Void
    ) -> Result<PushAnswer, PushFailure> {
        let request = push.request
        let encoded = push.encodedBySeq
        do throws(PushFailure) {
            let outcome = try live.applying(
                request, token: push.token, maximumClients: maximumClients,
                authorize: { push.refusedByAuthorize[$0.seq].map(SyncVerdict.refuse) ?? .allow }, reducer: reducer
            )
            let replayed = try ReplayedActions(request, handledBefore: live.handledThrough(request.client))
                .refusals(handled: recent[request.client] ?? [:], encoded: encoded)
            if outcome.handledMore {
                remember(outcome, of: request, encoded: encoded)
                lastPush[request.client] = push.receivedAt
            }
            live = outcome.store
            pusher = Pusher(client: request.client, token: push.token)
            return .success(PushAnswer(
                handledThrough: outcome.store.handledThrough(request.client),
                refused: replayed + outcome.refused.map { Refusal(seq: $0.seq, reason: $0.reason) },
                cursor: outcome.store.cursor
            ))
        } catch {
            return .failure(error)
        }
    }

    /// Keeps the actions `outcome` handled, as `encoded`, and forgets the client's actions before its push's first.
    private mutating func remember(
        _ outcome: LiveStore<State, Action>.Outcome, of request: PushRequest<Action>, encoded: [Int64: Data]
    ) {
        let first = request.actions.first?.seq ?? 0
        var handled = (recent[request.client] ?? [:]).filter { $0.key >= first }
        for applied in outcome.applied {
            handled[applied.seq] = HandledAction(action: encoded[applied.seq] ?? Data(), refusal: nil)
        }
        for refused in outcome.refused {
            handled[refused.seq] = HandledAction(action: encoded[refused.seq] ?? Data(), refusal: refused.reason)
        }
        recent[request.client] = handled
    }
}

/// A push as an entry of the action log: the batch, the token it came with, what `authorize` said of its actions on
/// the instance that took it (the hook may read what only that instance knows, such as the time), and when.
struct ReplicatedPush<Action: Codable & Sendable>: Codable, Sendable {
    var request: PushRequest<Action>
    /// Each action's bytes, as the instance that took the push encoded it: what every instance keeps to check the
    /// action pushed again. Encoded again on each instance, a `Set`'s elements could come in another order on each.
    var encoded: [Data]
    var token: String
    var refusedByAuthorize: [Int64: String]
    var receivedAt: Date
}

extension ReplicatedPush {
    /// ``encoded`` by sequence number.
    var encodedBySeq: [Int64: Data] {
        Dictionary(zip(request.actions.map(\.seq), encoded), uniquingKeysWith: { first, _ in first })
    }
}
