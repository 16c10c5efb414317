import Foundation
import PostgresNIO
import Statehouse
import StatehousePostgres
import StatehouseTestSupport

/// The replicated state of the tests: a count, the order in which actions were applied, and what effects sent.
struct Counter: Codable, Equatable, Sendable {
    var count = 0
    /// Folds every action's tag in, in order: equal only if two stores applied the same actions in the same order.
    var checksum: Int64 = 0
    /// The last numbered action, and whether every numbered action came after the one before it.
    var lastNumber: Int64 = 0
    var numbersInOrder = true
    var pongs = 0
    var note = ""
}

enum CounterAction: Codable, Equatable, Sendable {
    case increment(tag: Int64)
    /// One of a sequence dispatched by one store, in order.
    case numbered(Int64)
    /// Its effect records the store that runs it and sends `.pong`.
    case ping
    case pong
    /// Not deterministic: stores a new UUID.
    case scribble
}

/// The tests' reducer. `effects` records, for this store, each run of `.ping`'s effect.
func counterReducer(effects: Recorder<Int>) -> @Sendable (inout Counter, CounterAction) -> Effect<CounterAction> {
    { state, action in
        switch action {
        case .increment(let tag):
            state.count += 1
            state.checksum = state.checksum &* 31 &+ tag
        case .numbered(let number):
            state.count += 1
            state.checksum = state.checksum &* 31 &+ number
            state.numbersInOrder = state.numbersInOrder && number == state.lastNumber + 1
            state.lastNumber = number
        case .ping:
            return .run { send in
                effects.append(1)
                send(.pong)
            }
        case .pong:
            state.pongs += 1
        case .scribble:
            state.note = UUID().uuidString
        }
        return .none
    }
}

/// A replicated `Counter` on `log`, with issues recorded in `issues` and determinism verified.
func makeReplica(
    _ client: PostgresClient,
    log: String,
    snapshotEvery: Int = 100,
    effects: Recorder<Int> = Recorder(),
    issues: Recorder<ReplicationIssue> = Recorder()
) throws -> ReplicatedStore<Counter, CounterAction> {
    try ReplicatedStore(
        client: client, log: log, initialState: Counter(), snapshotEvery: snapshotEvery, verifyDeterminism: true,
        onIssue: { issues.append($0) }, reducer: counterReducer(effects: effects)
    )
}

/// Runs `body` while each of `stores` runs (follows its log and appends); stops them when it returns.
func whileRunning<State, Action, Result: Sendable>(
    _ stores: [ReplicatedStore<State, Action>],
    _ body: () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for store in stores { group.addTask { try await store.run() } }
        defer { group.cancelAll() }
        return try await body()
    }
}

/// Waits (60 s at most, unless told) until every store applied the log up to `sequence`.
func everyStore(
    _ stores: [ReplicatedStore<Counter, CounterAction>],
    appliedThrough sequence: Int64,
    timeout: Duration = .seconds(60)
) async -> Bool {
    await eventually(timeout: timeout) { stores.allSatisfy { $0.appliedSequence >= sequence } }
}
