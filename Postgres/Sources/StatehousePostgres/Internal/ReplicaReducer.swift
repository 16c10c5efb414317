import Foundation
import NIOCore
import Statehouse

/// The reducer of a replicated store's inner `Store`: applies the log's actions with the user's reducer, in order
/// and once each, runs the effects of this store's own actions only, tells their waiters, takes snapshots, and
/// (when asked) checks that the user's reducer is deterministic.
struct ReplicaReducer<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    let reducer: @Sendable (inout State, Action) -> Effect<Action>
    let replicator: Replicator
    let snapshotEvery: Int64
    let verifiesDeterminism: Bool

    func reduce(_ replica: inout ReplicaState<State>, _ action: ReplicaAction<State, Action>) -> Effect<ReplicaAction<State, Action>> {
        switch action {
        case .submit:
            // Taken to the log by `appending(to:)`: never applied here.
            return .none
        case .restore(let state, let sequence):
            // Newer than what was applied: at the start, or when a run started again finds a newer snapshot.
            guard sequence > replica.sequence else { return .none }
            replica = ReplicaState(state: state, sequence: sequence)
            return .none
        case .apply(let action, let sequence, let local):
            // The follower hands each entry over once, in order; this guard keeps it so whatever happens.
            guard sequence == replica.sequence + 1 else { return .none }
            let replayed = verifiesDeterminism ? Self.applying(action, to: replica.state, with: reducer) : nil
            let effect = reducer(&replica.state, action)
            replica.sequence = sequence
            if let replayed { check(replayed, against: replica.state, sequence: sequence) }
            guard let local else { return .none }
            replicator.applied(local: local, sequence: sequence)
            if sequence % snapshotEvery == 0, let encoded = try? Self.encoder.encode(replica.state) {
                replicator.saveSnapshot(ByteBuffer(bytes: encoded), after: sequence)
            }
            return effect.map { .submit($0, nil) }
        }
    }

    private static func applying(
        _ action: Action, to state: State, with reducer: (inout State, Action) -> Effect<Action>
    ) -> State {
        var state = state
        _ = reducer(&state, action)
        return state
    }

    /// Reports a difference between two results of one action on one state.
    private func check(_ replayed: State, against applied: State, sequence: Int64) {
        guard let first = try? Self.encoder.encode(applied), let second = try? Self.encoder.encode(replayed),
              first != second
        else { return }
        replicator.onIssue(ReplicationIssue(
            kind: .nondeterministicReducer, sequence: sequence,
            message: """
                The reducer of the replicated store on \(replicator.log.names.log) gave two different states for \
                action #\(sequence) applied twice to the same state: it reads something besides its state and \
                action (a clock, random numbers, UUIDs, globals, a dictionary's order), so the processes following \
                this log will drift apart. Pass such values in the action instead.
                """
        ))
    }

    /// Takes the actions dispatched here to the log, encoded, in the order the store handles them.
    static func appending(to replicator: Replicator) -> Middleware<ReplicaState<State>, ReplicaAction<State, Action>> {
        Middleware { _, action, next in
            guard case .submit(let action, let waiter) = action else { return next(action) }
            do {
                replicator.enqueue(ByteBuffer(bytes: try encoder.encode(action)), waiter: waiter)
            } catch {
                let message = """
                    An action of type \(Action.self) dispatched to the replicated store on \
                    \(replicator.log.names.log) could not be encoded (\(StorageError.CodingFailure(error))), so it \
                    was applied nowhere. Make its Codable conformance encode every case.
                    """
                waiter?.resume(throwing: StorageError(.unencodable, key: nil, operation: .encode, message: message, cause: error))
                replicator.onIssue(ReplicationIssue(kind: .unencodableAction, sequence: nil, message: message))
            }
        }
    }

    /// Sorted keys: two equal states encode to equal bytes, whatever their dictionaries' order.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
