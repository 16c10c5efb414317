import Foundation
import NIOCore
import PostgresNIO
import Statehouse
import StatehousePostgres
import StatehouseServer
import StatehouseSyncWire
import Synchronization

/// A store hosted on a PostgreSQL action log: each push is appended to the log, and every instance on the log (this
/// one included) applies it at its place there, so that all of them hold the same state, cursor and clients'
/// sequence numbers, and each publishes every change to its own followers.
final class ReplicatedHostedStore<State: Codable & Sendable, Action: Codable & Sendable>: AnyHostedStore {
    typealias Replica = ServerReplica<State, Action>

    let replica: ReplicatedStore<Replica, LogEntry<ReplicatedPush<Action>>>
    let feeds: StoreFeeds<State, Action>
    let limits: SyncLimits
    let authorize: @Sendable (SyncCaller, Action) -> SyncVerdict
    let answers: Answers<Result<PushAnswer, PushFailure>>
    let following: FollowingState
    /// Keeps the feeds told of every push the log applies.
    private let publishing: SubscriptionToken

    init(
        client: PostgresClient,
        log: String,
        initialState: State,
        limits: SyncLimits,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict,
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void
    ) throws(StorageError) {
        let answers = Answers<Result<PushAnswer, PushFailure>>()
        let maximumClients = limits.maximumClients
        let initial = Replica(initialState: initialState)
        let replica = try ReplicatedStore(client: client, log: log, initialState: initial, onIssue: onIssue) {
            (replica: inout Replica, entry: LogEntry<ReplicatedPush<Action>>) in
            guard case .taken(let id, let push) = entry else { return }
            let answer = replica.apply(push, maximumClients: maximumClients, reducer: reducer)
            replica.lastEntry = id
            // Every instance applies every push; only the one whose request waits for it keeps the answer.
            answers.deliver(answer, to: id)
        }
        let feeds = StoreFeeds<State, Action>(live: initial.live, followerBuffer: limits.followerBuffer, isOpen: false)
        // Synchronous: on the queue that applies the log, once per entry applied, in order; the push is answered
        // once its change is published.
        self.publishing = replica.store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: false) {
            Self.publish($0, to: feeds)
            answers.published($0.lastEntry)
        }
        self.following = FollowingState(
            open: { feeds.open(); answers.open() }, close: { feeds.close(); answers.close() }
        )
        self.replica = replica
        self.feeds = feeds
        self.limits = limits
        self.authorize = authorize
        self.answers = answers
    }

    /// Makes `replica`'s state the one the followers have; a new cursor is sent to them as a change.
    private static func publish(_ replica: Replica, to feeds: StoreFeeds<State, Action>) {
        let live = replica.live
        guard live.cursor != feeds.live.cursor, let state = try? StoreEvents.encoder.encode(live.state) else {
            feeds.publish(live, changes: [])
            return
        }
        let pusher = replica.pusher.map { SyncCaller(client: $0.client, token: $0.token) }
        let handledThrough = pusher.map { [$0: live.handledThrough(of: $0)] } ?? [:]
        feeds.publish(live, changes: [StoreChangeEvent(cursor: live.cursor, state: state, handledThrough: handledThrough)])
    }

    func push(_ body: Data, token: String) async throws(PushFailure) -> PushAnswer {
        let request = try PushRequest<Action>.decoding(body, limits: limits)
        let caller = SyncCaller(client: request.client, token: token)
        var refused: [Int64: String] = [:]
        for pushed in request.actions {
            if case .refuse(let reason) = authorize(caller, pushed.action) { refused[pushed.seq] = reason }
        }
        let push = ReplicatedPush(
            request: request, encoded: request.actions.map { (try? StoreEvents.encoder.encode($0.action)) ?? Data() },
            token: token, refusedByAuthorize: refused, receivedAt: Date()
        )
        guard let answer = await answers.send(push, through: replica) else {
            throw .unavailable("The push could not be appended to the store's log: push it again.")
        }
        return try answer.get()
    }

    var unavailability: String? {
        following.unavailability(of: "store")
    }

    func snapshot(for caller: SyncCaller) throws(PushFailure) -> Data {
        try feeds.snapshot(for: caller)
    }

    func follow(_ caller: SyncCaller, after lastSeen: Int64?) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
        feeds.follow(caller, after: lastSeen)
    }

    var clientCount: Int {
        feeds.live.clients.count
    }

    func clients() throws -> [SyncClientSummary] {
        let replica = replica.state
        return replica.live.clients.map { name, client in
            SyncClientSummary(
                name: name, handledThrough: client.handledThrough,
                lastPush: replica.lastPush[name] ?? Date(timeIntervalSince1970: 0)
            )
        }
        .sorted { $0.lastPush > $1.lastPush }
    }

    var followerCount: Int {
        feeds.followerCount
    }

    /// The state is the log's: nothing else changes it.
    func stateChangedElsewhere() {}
}
