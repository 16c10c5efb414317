import Dispatch
import Foundation
import NIOCore
import StatehouseSyncWire
import Synchronization

/// Who pushed: the client's own name for itself, and the name of the token it showed.
public struct SyncCaller: Sendable, Hashable {
    public let client: String
    public let token: String

    package init(client: String, token: String) {
        self.client = client
        self.token = token
    }
}

/// A hosted store, type-erased so that the server's routes hold stores of any state and action types.
package protocol AnyHostedStore: Sendable {
    /// Applies the batch in `body`, pushed with the token named `token`.
    func push(_ body: Data, token: String) async throws(PushFailure) -> PushAnswer
    /// The state now, and how far it holds the caller's client's actions (0 unless the client belongs to the
    /// caller's token).
    func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data
    /// The feed of changes for `client`: a snapshot first unless `lastSeen` is the current cursor or after it, then
    /// each change after both.
    /// - Returns: The events' bytes (each a whole server-sent event), and what ends them.
    func follow(_ caller: SyncCaller, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)
    /// Why the store answers no request now (503), if it does not.
    var unavailability: String? { get }
    /// The clients that pushed to this store, for a dashboard.
    var clientCount: Int { get }
    /// The clients that pushed to this store, the latest first.
    func clients() throws -> [SyncClientSummary]
    /// The feeds open now.
    var followerCount: Int { get }
    /// Reads the state again from where the app keeps it, and publishes it if it changed (a store hosted with
    /// `keptBy`; others keep their state themselves and ignore this).
    func stateChangedElsewhere()
}

/// One store a ``SyncServer`` hosts: its live state, the pushes applied to it one at a time, and its followers.
final class HostedStore<State: Codable & Sendable, Action: Codable & Sendable>: AnyHostedStore {
    let name: String
    let storage: SyncServerStorage
    let reducer: @Sendable (inout State, Action) throws -> Void
    /// Where the app keeps the authoritative state, when it keeps it itself (its own database); `nil` when the
    /// server's storage holds it.
    let source: (@Sendable () throws -> State)?
    let authorize: @Sendable (SyncCaller, Action) -> SyncVerdict
    let limits: SyncLimits
    /// The live state and the followers.
    let feeds: StoreFeeds<State, Action>
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
            let state = try StoreEvents.encoder.encode(try source())
            if state != stored?.state {
                live.state = try JSONDecoder().decode(State.self, from: state)
                live.cursor += 1
                try storage.commit(state: state, cursor: live.cursor, store: name)
            }
        }
        self.feeds = StoreFeeds(live: live, followerBuffer: limits.followerBuffer)
    }

    var unavailability: String? { nil }

    var clientCount: Int {
        feeds.live.clients.count
    }

    func clients() throws -> [SyncClientSummary] {
        try storage.clients(of: name)
    }

    var followerCount: Int {
        feeds.followerCount
    }

    func stateChangedElsewhere() {
        guard source != nil else { return }
        // On the queue that applies pushes: a state read here can never be older than one a push published.
        pushes.async { self.takeStateFromSource() }
    }

    /// Publishes the app's state as a change, with the next cursor, unless it is the state the followers have.
    private func takeStateFromSource() {
        guard let source, let state = try? source(), let encoded = try? StoreEvents.encoder.encode(state) else { return }
        var live = feeds.live
        guard encoded != (try? StoreEvents.encoder.encode(live.state)) else { return }
        live.state = state
        live.cursor += 1
        // Unstored, the change would be sent under a cursor that a restarted server gives again to another state.
        guard (try? storage.commit(state: encoded, cursor: live.cursor, store: name)) != nil else { return }
        // No client pushed it: every follower gets the event without sequence numbers.
        feeds.publish(live, changes: [StoreChangeEvent(cursor: live.cursor, state: encoded, handledThrough: [:])])
    }

    /// The refusals of the batch's actions the store handled before (see ``ReplayedActions``), from the storage.
    func replayed(_ request: PushRequest<Action>, handledBefore: Int64) throws(PushFailure) -> [Refusal] {
        let replayed = ReplayedActions(request, handledBefore: handledBefore)
        guard let seqs = replayed.seqs else { return [] }
        let handled: [Int64: HandledAction]
        do {
            handled = try storage.handled(store: name, client: request.client, seqs: seqs)
        } catch {
            throw .unavailable("The server could not read the actions it handled: \(error)")
        }
        return try replayed.refusals(handled: handled)
    }

    func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data {
        try feeds.snapshot(for: caller)
    }

    func follow(_ caller: SyncCaller, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        feeds.follow(caller, after: lastSeen)
    }
}
