import Dispatch
import Foundation
import NIOCore
import StatehouseSyncWire
import Synchronization

/// Who pushed: the client's own name for itself, and the name of the token it showed.
public struct SyncCaller: Sendable, Equatable {
    public let client: String
    public let token: String
}

/// A hosted store, type-erased so that the server's routes hold stores of any state and action types.
protocol AnyHostedStore: Sendable {
    /// Applies the batch in `body`, pushed with the token named `token`.
    func push(_ body: Data, token: String) async throws(PushFailure) -> PushAnswer
    func snapshot(client: String) throws(PushFailure) -> Data
    /// The feed of changes for `client`: a snapshot first unless `lastSeen` is the current cursor, then each change.
    /// - Returns: The events' bytes (each a whole server-sent event), and what ends them.
    func follow(client: String, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)
    /// The clients that pushed to this store, for a dashboard.
    var clientCount: Int { get }
    /// The feeds open now.
    var followerCount: Int { get }
}

/// One store a ``SyncServer`` hosts: its live state, the pushes applied to it one at a time, and its followers.
final class HostedStore<State: Codable & Sendable, Action: Codable & Sendable>: AnyHostedStore {
    private struct Follower {
        var client: String
        var events: AsyncStream<ByteBuffer>.Continuation
    }

    private struct Shared {
        var live: LiveStore<State, Action>
        var followers: [UInt64: Follower] = [:]
        var nextFollower: UInt64 = 0

        /// Sends a change to every follower: to the pushing client's own feeds with how far the push handled its
        /// actions, to the others without (a client's name is what it pushes as; nobody else learns it). A follower
        /// whose buffer is full is cut off rather than skipped: a skipped change could carry its client's last
        /// handled sequence number, and the client would apply those actions twice. It reconnects with the last id it
        /// saw and starts again from a snapshot.
        mutating func publish(_ change: ChangeEvent) {
            for (id, follower) in followers {
                let event = follower.client == change.client ? change.own : change.others
                if case .dropped = follower.events.yield(event) {
                    follower.events.finish()
                    followers.removeValue(forKey: id)
                }
            }
        }
    }

    /// A push's change as the feeds send it.
    private struct ChangeEvent {
        var client: String
        var own: ByteBuffer
        var others: ByteBuffer
    }

    let name: String
    private let storage: SyncServerStorage
    private let reducer: @Sendable (inout State, Action) throws -> Void
    private let authorize: @Sendable (SyncCaller, Action) -> SyncVerdict
    private let limits: SyncLimits
    /// The live state and the followers, under one lock: a follower registers and reads its snapshot in the same
    /// critical section in which a push publishes, so it neither misses a change nor sees one twice.
    private let shared: Mutex<Shared>
    /// Pushes run here one at a time, off the server's event loops (a commit waits for the disk).
    private let pushes: DispatchQueue

    init(
        name: String,
        initialState: State,
        storage: SyncServerStorage,
        limits: SyncLimits,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict
    ) throws {
        self.name = name
        self.storage = storage
        self.limits = limits
        self.reducer = reducer
        self.authorize = authorize
        self.pushes = DispatchQueue(label: "statehouse.sync.\(name)")
        var live = LiveStore<State, Action>(state: initialState, cursor: 0, clients: [:])
        if let stored = try storage.load(store: name) {
            live = LiveStore(state: try JSONDecoder().decode(State.self, from: stored.state), cursor: stored.cursor, clients: stored.clients)
        }
        self.shared = Mutex(Shared(live: live))
    }

    var clientCount: Int {
        shared.withLock { $0.live.clients.count }
    }

    var followerCount: Int {
        shared.withLock { $0.followers.count }
    }

    func push(_ body: Data, token: String) async throws(PushFailure) -> PushAnswer {
        let request: PushRequest<Action>
        do {
            request = try JSONDecoder().decode(PushRequest<Action>.self, from: body)
        } catch {
            throw .badRequest("The body is not a batch of this store's actions: \(error)")
        }
        guard ClientID.isValid(request.client) else {
            throw .badRequest("A client names itself with 1 to 64 characters of A-Z a-z 0-9 . _ -.")
        }
        let caller = SyncCaller(client: request.client, token: token)
        guard request.actions.count <= limits.maximumBatch else {
            throw .tooLarge("A batch holds at most \(limits.maximumBatch) actions.")
        }
        let result: Result<PushAnswer, PushFailure> = await withCheckedContinuation { continuation in
            pushes.async {
                do throws(PushFailure) {
                    continuation.resume(returning: .success(try self.apply(request, caller: caller)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Applies, commits, then publishes one push. Runs on ``pushes``, so the live state it starts from is the last
    /// one committed.
    private func apply(_ request: PushRequest<Action>, caller: SyncCaller) throws(PushFailure) -> PushAnswer {
        let live = shared.withLock { $0.live }
        let outcome = try live.applying(
            request, token: caller.token, maximumClients: limits.maximumClients,
            authorize: { authorize(caller, $0) }, reducer: reducer
        )
        let replayedRefusals = try replayed(request, handledBefore: live.handledThrough(request.client))
        let handledThrough = outcome.store.handledThrough(request.client)
        var state: Data?
        if outcome.handledMore {
            do {
                let encoder = Self.encoder
                let encodedState = try encoder.encode(outcome.store.state)
                try storage.commit(
                    CommittedPush(
                        client: request.client,
                        token: caller.token,
                        state: encodedState,
                        cursor: outcome.store.cursor,
                        handledThrough: handledThrough,
                        applied: try zip((live.cursor + 1)..., outcome.applied).map { cursor, applied in
                            CommittedPush.Applied(cursor: cursor, seq: applied.seq, action: try encoder.encode(applied.action))
                        },
                        refused: try outcome.refused.map { refused in
                            CommittedPush.Refused(seq: refused.seq, reason: refused.reason, action: try encoder.encode(refused.action))
                        }
                    ),
                    store: name
                )
                state = encodedState
            } catch {
                throw .unavailable("The server could not store the push: \(error)")
            }
        }
        let change = outcome.applied.isEmpty ? nil : state.map { state in
            ChangeEvent(
                client: request.client,
                own: Self.changeEvent(cursor: outcome.store.cursor, state: state, handledThrough: handledThrough),
                others: Self.changeEvent(cursor: outcome.store.cursor, state: state, handledThrough: nil)
            )
        }
        shared.withLock { shared in
            shared.live = outcome.store
            if let change { shared.publish(change) }
        }
        let refusals = replayedRefusals + outcome.refused.map { Refusal(seq: $0.seq, reason: $0.reason) }
        return PushAnswer(handledThrough: handledThrough, refused: refusals, cursor: outcome.store.cursor)
    }

    /// The refusals of the batch's actions the store handled before (a batch whose answer was lost, pushed again),
    /// once each is known to be the action handled under its number: one that differs would otherwise be skipped
    /// as a replay, and lost.
    private func replayed(_ request: PushRequest<Action>, handledBefore: Int64) throws(PushFailure) -> [Refusal] {
        let replayed = request.actions.prefix { $0.seq <= handledBefore }
        guard let first = replayed.first?.seq, let last = replayed.last?.seq else { return [] }
        var refusals: [Refusal] = []
        do {
            let handled = try storage.handled(store: name, client: request.client, seqs: first...last)
            let encoder = Self.encoder
            for pushed in replayed {
                guard let known = handled[pushed.seq] else { continue }
                guard try encoder.encode(pushed.action) == known.action else {
                    throw PushFailure.replayDiffers(seq: pushed.seq, handledThrough: handledBefore)
                }
                if let reason = known.refusal { refusals.append(Refusal(seq: pushed.seq, reason: reason)) }
            }
        } catch let failure as PushFailure {
            throw failure
        } catch {
            throw .unavailable("The server could not read the actions it handled: \(error)")
        }
        return refusals
    }

    func snapshot(client: String) throws(PushFailure) -> Data {
        let live = shared.withLock { $0.live }
        do {
            return try Self.encoder.encode(
                StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(client))
            )
        } catch {
            throw .unavailable("The store's state cannot be encoded: \(error)")
        }
    }

    func follow(client: String, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        let (events, continuation) = AsyncStream.makeStream(
            of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(limits.followerBuffer)
        )
        let id = shared.withLock { shared in
            if lastSeen != shared.live.cursor {
                let live = shared.live
                continuation.yield(
                    Self.event(
                        FeedEvent.snapshot, id: live.cursor,
                        json: (try? Self.encoder.encode(
                            StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(client))
                        )) ?? Data("{}".utf8)
                    )
                )
            }
            defer { shared.nextFollower += 1 }
            shared.followers[shared.nextFollower] = Follower(client: client, events: continuation)
            return shared.nextFollower
        }
        let end: @Sendable () -> Void = { [weak self] in
            continuation.finish()
            _ = self?.shared.withLock { $0.followers.removeValue(forKey: id) }
        }
        return (events, end)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// A ``StoreChange``'s event, around the state as the commit encoded it: the state is encoded once per push,
    /// however many followers it goes to.
    private static func changeEvent(cursor: Int64, state: Data, handledThrough: Int64?) -> ByteBuffer {
        var json = Data("{\"cursor\":\(cursor),".utf8)
        if let handledThrough { json.append(Data("\"handledThrough\":\(handledThrough),".utf8)) }
        json.append(Data("\"state\":".utf8))
        json.append(state)
        json.append(Data("}".utf8))
        return event(FeedEvent.change, id: cursor, json: json)
    }

    /// One server-sent event. JSON without pretty printing is one line, as a `data:` field must be.
    private static func event(_ name: String, id: Int64, json: Data) -> ByteBuffer {
        var buffer = ByteBuffer(string: "id: \(id)\nevent: \(name)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }
}
