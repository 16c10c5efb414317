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
    /// The state now, and how far it holds the caller's client's actions (0 unless the client belongs to the
    /// caller's token).
    func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data
    /// The feed of changes for `client`: a snapshot first unless `lastSeen` is the current cursor, then each change.
    /// - Returns: The events' bytes (each a whole server-sent event), and what ends them.
    func follow(_ caller: SyncCaller, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)
    /// The clients that pushed to this store, for a dashboard.
    var clientCount: Int { get }
    /// The feeds open now.
    var followerCount: Int { get }
    /// Reads the state again from where the app keeps it, and publishes it if it changed (a store hosted with
    /// `keptBy`; others keep their state themselves and ignore this).
    func stateChangedElsewhere()
}

/// One store a ``SyncServer`` hosts: its live state, the pushes applied to it one at a time, and its followers.
final class HostedStore<State: Codable & Sendable, Action: Codable & Sendable>: AnyHostedStore {
    struct Follower {
        var caller: SyncCaller
        var events: AsyncStream<ByteBuffer>.Continuation
    }

    struct Shared {
        var live: LiveStore<State, Action>
        var followers: [UInt64: Follower] = [:]
        var nextFollower: UInt64 = 0

        /// Sends a change to every follower: to the pushing client's own feeds (its name, with the token it pushes
        /// with) with how far the push handled its actions, to the others without. A follower
        /// whose buffer is full is cut off rather than skipped: a skipped change could carry its client's last
        /// handled sequence number, and the client would apply those actions twice. It reconnects with the last id it
        /// saw and starts again from a snapshot.
        mutating func publish(_ change: ChangeEvent) {
            for (id, follower) in followers {
                let event = follower.caller == change.pusher ? change.own : change.others
                if case .dropped = follower.events.yield(event) {
                    follower.events.finish()
                    followers.removeValue(forKey: id)
                }
            }
        }
    }

    /// A push's change as the feeds send it.
    struct ChangeEvent {
        var pusher: SyncCaller
        var own: ByteBuffer
        var others: ByteBuffer
    }

    let name: String
    let storage: SyncServerStorage
    let reducer: @Sendable (inout State, Action) throws -> Void
    /// Where the app keeps the authoritative state, when it keeps it itself (its own database); `nil` when the
    /// server's storage holds it.
    let source: (@Sendable () throws -> State)?
    let authorize: @Sendable (SyncCaller, Action) -> SyncVerdict
    let limits: SyncLimits
    /// The live state and the followers, under one lock: a follower registers and reads its snapshot in the same
    /// critical section in which a push publishes, so it neither misses a change nor sees one twice.
    let shared: Mutex<Shared>
    /// The pushes waiting for the next commit. They are applied one at a time, in the order they came, and committed
    /// together in one transaction, off the server's event loops: a commit waits for the disk, and one commit for
    /// all the pushes that came meanwhile is what lets many clients push at once.
    let waitingPushes = PushQueue<WaitingPush<Action>>()
    let pushes: DispatchQueue

    init(
        name: String,
        initialState: State,
        source: (@Sendable () throws -> State)? = nil,
        storage: SyncServerStorage,
        limits: SyncLimits,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict
    ) throws {
        self.name = name
        self.storage = storage
        self.limits = limits
        self.reducer = reducer
        self.source = source
        self.authorize = authorize
        self.pushes = DispatchQueue(label: "statehouse.sync.\(name)")
        var live = LiveStore<State, Action>(state: initialState, cursor: 0, clients: [:])
        let stored = try storage.load(store: name)
        if let stored {
            live = LiveStore(state: try JSONDecoder().decode(State.self, from: stored.state), cursor: stored.cursor, clients: stored.clients)
        }
        if let source {
            // The app's state may have changed while the server was down: a client that saw the stored cursor
            // resumes its feed from it, and must be sent the state as it is now.
            let state = try Self.encoder.encode(try source())
            if state != stored?.state {
                live.state = try JSONDecoder().decode(State.self, from: state)
                live.cursor += 1
                try storage.commit(state: state, cursor: live.cursor, store: name)
            }
        }
        self.shared = Mutex(Shared(live: live))
    }

    var clientCount: Int {
        shared.withLock { $0.live.clients.count }
    }

    var followerCount: Int {
        shared.withLock { $0.followers.count }
    }

    func stateChangedElsewhere() {
        guard source != nil else { return }
        // On the queue that applies pushes: a state read here can never be older than one a push published.
        pushes.async { self.takeStateFromSource() }
    }

    /// Publishes the app's state as a change, with the next cursor, unless it is the state the followers have.
    private func takeStateFromSource() {
        guard let source, let state = try? source(), let encoded = try? Self.encoder.encode(state) else { return }
        let live = shared.withLock { $0.live }
        guard encoded != (try? Self.encoder.encode(live.state)) else { return }
        let cursor = live.cursor + 1
        // Unstored, the change would be sent under a cursor that a restarted server gives again to another state.
        guard (try? storage.commit(state: encoded, cursor: cursor, store: name)) != nil else { return }
        let event = Self.changeEvent(cursor: cursor, state: encoded, handledThrough: nil)
        shared.withLock { shared in
            shared.live.state = state
            shared.live.cursor = cursor
            // No follower is this pusher (no client is named ""), so every one gets the event without numbers.
            shared.publish(ChangeEvent(pusher: SyncCaller(client: "", token: ""), own: event, others: event))
        }
    }

    /// The refusals of the batch's actions the store handled before (a batch whose answer was lost, pushed again),
    /// once each is known to be the action handled under its number: one that differs would otherwise be skipped
    /// as a replay, and lost.
    func replayed(_ request: PushRequest<Action>, handledBefore: Int64) throws(PushFailure) -> [Refusal] {
        let replayed = request.actions.prefix { $0.seq <= handledBefore }
        guard let first = replayed.first?.seq, let last = replayed.last?.seq else { return [] }
        var refusals: [Refusal] = []
        do {
            let handled = try storage.handled(store: name, client: request.client, seqs: first...last)
            for pushed in replayed {
                guard let known = handled[pushed.seq] else { continue }
                guard try Self.isSame(pushed.action, as: known.action) else {
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

    /// Whether `pushed` is the action the store handled as `known` (its bytes as this server encoded them): equal
    /// values when `Action` is `Equatable`, since a `Set` or a dictionary encodes in an order that changes from one
    /// process to the next, so the same action pushed again after a restart may come in other bytes; else equal
    /// bytes.
    static func isSame(_ pushed: Action, as known: Data) throws -> Bool {
        if let pushed = pushed as? any Equatable, let handled = try? JSONDecoder().decode(Action.self, from: known) {
            return pushed.isEqual(to: handled)
        }
        return try encoder.encode(pushed) == known
    }

    func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data {
        let live = shared.withLock { $0.live }
        do {
            return try Self.encoder.encode(
                StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(of: caller))
            )
        } catch {
            throw .unavailable("The store's state cannot be encoded: \(error)")
        }
    }

    func follow(_ caller: SyncCaller, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
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
                            StoreSnapshot(cursor: live.cursor, state: live.state, handledThrough: live.handledThrough(of: caller))
                        )) ?? Data("{}".utf8)
                    )
                )
            }
            defer { shared.nextFollower += 1 }
            shared.followers[shared.nextFollower] = Follower(caller: caller, events: continuation)
            return shared.nextFollower
        }
        let end: @Sendable () -> Void = { [weak self] in
            continuation.finish()
            _ = self?.shared.withLock { $0.followers.removeValue(forKey: id) }
        }
        return (events, end)
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// A ``StoreChange``'s event, around the state as the commit encoded it: the state is encoded once per push,
    /// however many followers it goes to.
    static func changeEvent(cursor: Int64, state: Data, handledThrough: Int64?) -> ByteBuffer {
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

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
