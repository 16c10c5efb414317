import Dispatch
import Foundation
import NIOCore
import PostgresNIO
import Statehouse

/// A `Store` whose actions go through an action log in PostgreSQL, so that every process on every
/// machine that follows the log holds the same state.
///
/// ```swift
/// struct Tally: Codable, Equatable, Sendable { var count = 0 }
/// enum TallyAction: Codable, Sendable { case increment, add(Int, at: Date) }
///
/// let replica = try ReplicatedStore(client: client, log: "tally_actions", initialState: Tally()) {
///     (state: inout Tally, action: TallyAction) in
///     switch action {
///     case .increment: state.count += 1
///     case .add(let amount, _): state.count += amount   // time travels in the action, never read here
///     }
/// }
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
///     group.addTask { try await replica.run() }        // follows the log, appends what is dispatched here
///     let token = replica.store.subscribe(\.count) { print("count:", $0) }
///     replica.store.dispatch(.increment)                // from any thread; applied once the log has it
///     try await replica.send(.add(2, at: .now))         // returns once applied here
/// }
/// ```
///
/// ``store`` is an ordinary `Store`: subscribe to it, scope it, read its `values`, dispatch to it. Its `dispatch`
/// does not apply the action, though: it queues it to be appended to the log, in one transaction that gives it the
/// next sequence number (no gaps, in commit order). Every replicated store on the log, this one included, applies
/// the log's actions in that order with the same reducer, and their subscribers see each action's result, in
/// order. An action the log did not accept is applied nowhere, so instances never diverge through a failed write.
///
/// ## The reducer
///
/// Every process runs the reducer on every action, and all must reach the same state. So the reducer must be
/// **deterministic**: it reads nothing but the state and the action it is given: no clock (pass the time in the
/// action), no random numbers or UUIDs (pass them in the action), no files, no globals, no other store. It must
/// not depend on the order of a `Dictionary` or `Set` either. `verifyDeterminism: true` checks this while you
/// develop: every action is applied twice to the same state and the two encoded results compared; a difference is
/// reported as ``ReplicationIssue/Kind/nondeterministicReducer``.
///
/// ## Effects
///
/// A reducer's effects run only in the store that dispatched the action (the one whose ``store`` was sent it);
/// elsewhere the action changes the state and its effects are dropped. Actions an effect sends are dispatched like
/// any other: through the log.
///
/// ## When PostgreSQL is unreachable
///
/// `dispatch` never blocks and never throws: actions are queued in this process, in order, and appended when the
/// server answers again (retried with backoff, 5 ms doubling up to 1 s, for as long as ``run()`` runs), before
/// any action dispatched after them. An append whose answer was lost is looked up before it is tried again, so no
/// action is appended twice. Until then the action is not applied, here or anywhere; ``pendingCount`` says how
/// many wait. Meanwhile the store follows the log again from the last action it applied, so it applies every
/// action once, in order, whoever appended it. An append the server refuses for good (missing privileges, a table
/// changed by hand) is dropped and reported as ``ReplicationIssue/Kind/actionNotAppended``; ``send(_:)`` throws it.
///
/// ## Snapshots
///
/// Every `snapshotEvery` actions, the store that appended the action stores the encoded state after it in
/// `<log>_snapshots`. A store starting (a new process, a restart) takes the newest snapshot that precedes its own
/// first action in the log (a later one would stand for that action, whose effects and ``send(_:)`` only this store
/// can serve) and applies only the actions after it: its subscribers see the snapshot's state, then each action
/// after it. (Call ``waitUntilCaughtUp()`` before dispatching when that matters.) The log itself is kept whole: a
/// snapshot that no longer decodes (the state's type changed) is reported and the whole log replayed instead.
public final class ReplicatedStore<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    /// The store to subscribe to and dispatch to: its actions go to the log, and it shows the log's state.
    public let store: Store<State, Action>
    /// The log's table.
    public let log: String
    /// How many actions apart snapshots are taken.
    public let snapshotEvery: Int

    let inner: Store<ReplicaState<State>, ReplicaAction<State, Action>>
    let replicator: Replicator
    /// Hands the log's entries to the inner store in order, off the event loop that reads them: the reducer and
    /// subscribers then run on a thread that may block.
    let deliveries = DispatchQueue(label: "StatehousePostgres.ReplicatedStore")

    /// Creates a store on the action log `log`, whose reducer may return effects.
    ///
    /// The log's tables are made the first time a store on it runs. Nothing is read or appended until ``run()``
    /// runs; until then ``store`` shows `initialState`.
    ///
    /// - Parameters:
    ///   - client: A client whose `run()` runs while the store does.
    ///   - log: The log's table: 1 to 48 lowercase letters, digits and underscores, starting with a letter or an
    ///     underscore; `<log>_head`, `<log>_snapshots` and `<log>_notify` go with it. Not the table of a
    ///     ``PostgresStorage``.
    ///   - initialState: The state before the log's first action. Every store on one log must be given the same.
    ///   - snapshotEvery: How many actions apart the state is stored, to bound a starting store's catching up.
    ///   - verifyDeterminism: Applies every action twice and compares the results (see "The reducer" above): for
    ///     development and tests; it doubles the reducer's work and encodes the state twice per action.
    ///   - onIssue: Where ``ReplicationIssue``s go; standard error by default. Called on any thread.
    ///   - reducer: Applies an action to the state, deterministically, and says what to do next.
    /// - Throws: `StorageError.Kind.invalidConfiguration` for an invalid `log` name or a `snapshotEvery` below 1.
    @_disfavoredOverload
    public init(
        client: PostgresClient,
        log: String = "statehouse_actions",
        initialState: State,
        snapshotEvery: Int = 100,
        verifyDeterminism: Bool = false,
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void = ReplicationIssue.standardError,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>
    ) throws(StorageError) {
        let names = try LogNames(validating: log)
        guard snapshotEvery >= 1 else {
            throw StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: "snapshotEvery is \(snapshotEvery): give the number of actions between snapshots, 1 or more."
            )
        }
        let replicator = Replicator(log: ActionLog(client: client, names: names), onIssue: onIssue)
        let inner = Store(
            initialState: ReplicaState(state: initialState, sequence: 0),
            reducer: ReplicaReducer(
                reducer: reducer, replicator: replicator, snapshotEvery: Int64(snapshotEvery),
                verifiesDeterminism: verifyDeterminism
            ).reduce,
            middleware: [ReplicaReducer<State, Action>.appending(to: replicator)]
        )
        self.inner = inner
        self.replicator = replicator
        self.log = log
        self.snapshotEvery = snapshotEvery
        self.store = inner.scope(state: \.state, action: { .submit($0, nil) })
    }

    /// Creates a store on the action log `log` whose reducer only changes the state.
    ///
    /// Everything else is as for the initializer whose reducer returns an `Effect`.
    public convenience init(
        client: PostgresClient,
        log: String = "statehouse_actions",
        initialState: State,
        snapshotEvery: Int = 100,
        verifyDeterminism: Bool = false,
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void = ReplicationIssue.standardError,
        reducer: @escaping @Sendable (inout State, Action) -> Void
    ) throws(StorageError) {
        try self.init(
            client: client, log: log, initialState: initialState, snapshotEvery: snapshotEvery,
            verifyDeterminism: verifyDeterminism, onIssue: onIssue,
            reducer: Reducer(reducer).reduce
        )
    }

    /// The current state: the result of the log's actions up to ``appliedSequence``.
    public var state: State { store.state }

    /// The sequence number of the last action of the log applied here; 0 before the first.
    public var appliedSequence: Int64 { inner.state.sequence }

    /// How many actions dispatched here are not yet known to be in the log (while the server is unreachable, they
    /// accumulate here).
    public var pendingCount: Int { replicator.pendingCount }

    /// Queues `action` for the log; the same as `store.dispatch(action)`. From any thread; it waits only for its
    /// turn on the local store, never for the server (use ``send(_:)`` to wait until the log has it).
    public func dispatch(_ action: Action) {
        store.dispatch(action)
    }

    /// Dispatches `action` and waits until this store applied it.
    ///
    /// In order with ``dispatch(_:)``: an action dispatched before it on this thread is appended before it. When
    /// it returns, ``state`` includes the action's result. Cancelling the calling task does not withdraw the
    /// action, and the call waits for as long as it takes (``run()`` must run for it to end).
    ///
    /// - Returns: The action's sequence number in the log.
    /// - Throws: `StorageError` if the action cannot be encoded, or the server refused to append it.
    @discardableResult
    public func send(_ action: Action) async throws(StorageError) -> Int64 {
        do {
            return try await withCheckedThrowingContinuation { waiter in
                inner.dispatch(.submit(action, waiter))
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(
                .io, key: nil, operation: .save, message: PostgresFailure.describe(error),
                cause: PostgresErrorCause.redacting(error)
            )
        }
    }

    /// Waits until this store applied the log's actions up to `sequence`.
    public func waitUntilApplied(through sequence: Int64) async {
        for await applied in inner.values(\.sequence) where applied >= sequence { return }
    }

    /// Waits until this store applied every action the log held when ``run()`` first read it to its end.
    public func waitUntilCaughtUp() async {
        await waitUntilApplied(through: replicator.waitUntilCaughtUp())
    }
}
