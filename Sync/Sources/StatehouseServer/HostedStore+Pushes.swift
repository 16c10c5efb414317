import Foundation
import StatehouseSyncWire
import Synchronization

/// A push waiting for its group's commit.
struct WaitingPush<Action: Codable & Sendable>: Sendable {
    var request: PushRequest<Action>
    var token: String
    var answer: CheckedContinuation<Result<PushAnswer, PushFailure>, Never>
}

extension HostedStore {
    /// What one push of a group does once its group commits.
    private struct PreparedPush {
        var answer: PushAnswer
        var commit: CommittedPush?
        var change: StoreChangeEvent?
    }

    func push(_ body: Data, token: String) async throws(PushFailure) -> PushAnswer {
        // Decoded here, on the request's own task: only applying and committing wait in line.
        let request = try PushRequest<Action>.decoding(body, limits: limits)
        let result = await withCheckedContinuation { answer in
            if waitingPushes.add(WaitingPush(request: request, token: token, answer: answer)) {
                pushes.async { self.drainPushes() }
            }
        }
        return try result.get()
    }

    /// Runs on ``pushes``: commits the waiting pushes a group at a time until none waits.
    private func drainPushes() {
        var deferred: [WaitingPush<Action>] = []
        while true {
            let group = deferred + waitingPushes.takeAll(keepsDraining: !deferred.isEmpty)
            guard !group.isEmpty else { return }
            deferred = commit(group)
        }
    }

    /// Applies each push of `group` in turn to the live state, commits what they did in one transaction, then
    /// publishes their changes and answers them. If the commit fails, none of them happened.
    ///
    /// - Returns: The pushes left for the next group: each one whose client has an earlier push in this group. It
    ///   may carry that push's actions again (the first answer was lost while a commit waited), and only once they
    ///   are committed can it be checked against them: its refusals reported again, an action that differs refused
    ///   (409).
    private func commit(_ group: [WaitingPush<Action>]) -> [WaitingPush<Action>] {
        // Only this queue changes the live state: it stays what it is read here until this group publishes.
        var live = feeds.live
        var taken: [WaitingPush<Action>] = []
        var deferred: [WaitingPush<Action>] = []
        var clientsInGroup: Set<String> = []
        for waiting in group {
            if clientsInGroup.contains(waiting.request.client) {
                deferred.append(waiting)
            } else {
                taken.append(waiting)
                clientsInGroup.insert(waiting.request.client)
            }
        }
        let prepared = taken.map { waiting in
            Result { () throws(PushFailure) -> PreparedPush in try prepare(waiting, on: &live) }
        }
        let commits = prepared.compactMap { try? $0.get().commit }
        if !commits.isEmpty {
            do {
                try storage.commit(commits, store: name)
            } catch {
                let failure = PushFailure.unavailable("The server could not store the push: \(error)")
                for waiting in taken { waiting.answer.resume(returning: .failure(failure)) }
                return deferred
            }
        }
        feeds.publish(live, changes: prepared.compactMap { try? $0.get().change })
        for (waiting, result) in zip(taken, prepared) { waiting.answer.resume(returning: result.map(\.answer)) }
        return deferred
    }

    /// Applies one push to `live`, which it changes only if the push is taken.
    private func prepare(
        _ waiting: WaitingPush<Action>, on live: inout LiveStore<State, Action>
    ) throws(PushFailure) -> PreparedPush {
        let request = waiting.request
        let caller = SyncCaller(client: request.client, token: waiting.token)
        let outcome = try live.applying(
            request, token: caller.token, maximumClients: limits.maximumClients,
            authorize: { authorize(caller, $0.action) }, reducer: reducer
        )
        // Reads what earlier groups committed: a group holds one push of each client (see `commit`).
        let replayedRefusals = try replayed(request, handledBefore: live.handledThrough(request.client))
        let handledThrough = outcome.store.handledThrough(request.client)
        var prepared = PreparedPush(
            answer: PushAnswer(
                handledThrough: handledThrough,
                refused: replayedRefusals + outcome.refused.map { Refusal(seq: $0.seq, reason: $0.reason) },
                cursor: outcome.store.cursor
            )
        )
        if outcome.handledMore {
            let encoder = StoreEvents.encoder
            do {
                let state = try encoder.encode(outcome.store.state)
                prepared.commit = CommittedPush(
                    client: request.client,
                    token: caller.token,
                    state: state,
                    cursor: outcome.store.cursor,
                    handledThrough: handledThrough,
                    applied: try zip((live.cursor + 1)..., outcome.applied).map { cursor, applied in
                        CommittedPush.Applied(cursor: cursor, seq: applied.seq, action: try encoder.encode(applied.action))
                    },
                    refused: try outcome.refused.map { refused in
                        CommittedPush.Refused(seq: refused.seq, reason: refused.reason, action: try encoder.encode(refused.action))
                    }
                )
                if !outcome.applied.isEmpty {
                    prepared.change = StoreChangeEvent(
                        cursor: outcome.store.cursor, state: state, handledThrough: [caller: handledThrough]
                    )
                }
            } catch {
                throw .unavailable("The push's state or actions cannot be encoded: \(error)")
            }
        }
        live = outcome.store
        return prepared
    }
}
