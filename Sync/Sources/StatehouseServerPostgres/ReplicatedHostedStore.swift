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

    let replica: ReplicatedStore<Replica, ReplicatedPush<Action>>
    let feeds: StoreFeeds<State, Action>
    let limits: SyncLimits
    let authorize: @Sendable (SyncCaller, Action) -> SyncVerdict
    let answers: PushAnswers
    let following = FollowingState()
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
        let answers = PushAnswers()
        let maximumClients = limits.maximumClients
        let initial = Replica(initialState: initialState)
        let replica = try ReplicatedStore(client: client, log: log, initialState: initial, onIssue: onIssue) {
            (replica: inout Replica, push: ReplicatedPush<Action>) in
            let answer = replica.apply(push, maximumClients: maximumClients, reducer: reducer)
            // Every instance applies every push; only the one whose request waits for it keeps the answer.
            answers.deliver(answer, to: push.id)
        }
        let feeds = StoreFeeds<State, Action>(live: initial.live, followerBuffer: limits.followerBuffer)
        // Synchronous: on the queue that applies the log, once per push applied, in order.
        self.publishing = replica.store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: false) {
            Self.publish($0, to: feeds)
        }
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
        let push = ReplicatedPush(id: UUID(), request: request, token: token, refusedByAuthorize: refused, receivedAt: Date())
        answers.expect(push.id)
        do {
            try await replica.send(push)
        } catch {
            answers.forget(push.id)
            throw .unavailable("The push could not be appended to the store's log: \(error)")
        }
        guard let answer = answers.take(push.id) else {
            throw .unavailable("The push was applied without an answer; push it again.")
        }
        return try answer.get()
    }

    var unavailability: String? {
        following.isFollowing ? nil : "The store is catching up with its log, or this instance does not follow it: push later."
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

/// The answers of the pushes this instance appended, from the reducer that applies them to the request that waits.
final class PushAnswers: Sendable {
    private let waiting = Mutex<[UUID: Result<PushAnswer, PushFailure>?]>([:])

    /// Registers a push before it is appended, so that its answer is kept when it is applied.
    func expect(_ id: UUID) {
        waiting.withLock { $0[id] = .some(nil) }
    }

    func deliver(_ answer: Result<PushAnswer, PushFailure>, to id: UUID) {
        waiting.withLock { waiting in
            if waiting[id] != nil { waiting[id] = answer }
        }
    }

    func take(_ id: UUID) -> Result<PushAnswer, PushFailure>? {
        waiting.withLock { $0.removeValue(forKey: id) } ?? nil
    }

    func forget(_ id: UUID) {
        _ = waiting.withLock { $0.removeValue(forKey: id) }
    }
}

/// Whether the instance follows its log and has caught up with it: until then its state may be older than what a
/// client saw from another instance, and it answers 503.
final class FollowingState: Sendable {
    private enum Phase: Equatable {
        case idle
        case catchingUp(UInt64)
        case following
    }

    private let phase = Mutex<(phase: Phase, runs: UInt64)>((.idle, 0))

    var isFollowing: Bool {
        phase.withLock { $0.phase == .following }
    }

    /// A run starts: returns its number, or `nil` while another runs.
    func start() -> UInt64? {
        phase.withLock { state in
            guard state.phase == .idle else { return nil }
            state.runs += 1
            state.phase = .catchingUp(state.runs)
            return state.runs
        }
    }

    /// The run numbered `run` caught up; ignored once it has ended.
    func caughtUp(run: UInt64) {
        phase.withLock { state in
            if state.phase == .catchingUp(run) { state.phase = .following }
        }
    }

    func stop() {
        phase.withLock { $0.phase = .idle }
    }
}
