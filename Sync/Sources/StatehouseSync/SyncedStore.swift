import Foundation
import Statehouse
import StatehouseSyncWire

/// A store that works offline and follows a `SyncServer` (`StatehouseServer`): the same reducer runs here at once,
/// and on the server for good.
///
/// ```swift
/// let synced = try SyncedStore(name: "tracker", initialState: Tracker(), reducer: trackerReducer,
///                              server: url, token: token, outbox: outboxURL)
/// synced.store.dispatch(.add("Writing"))        // works offline
/// for await status in synced.syncStatus { … }     // synced, pending(n), offline(since:), refused(…), failed(…)
/// ```
///
/// ``store`` is an ordinary `Store`: its actions apply at once and go into a durable outbox (after ``flush()``, or
/// the write coalescing window, an accepted action survives `kill -9`), which is pushed in batches. The server's feed
/// is followed, and on each change the store shows the server's state with the actions it has not applied yet
/// applied again, in order. The reducer must be deterministic (no clock, no random numbers: pass them in actions):
/// the server replays it, and so does every rebase. Effects run here, once, when the app dispatches; the server and
/// rebases drop them.
///
/// An action the server refuses (its `authorize` hook, or its reducer throwing) leaves the outbox, disappears from
/// the state, and shows in ``syncStatus`` as ``SyncStatus/refused(_:)``; nothing else is lost or applied twice.
public final class SyncedStore<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    /// The app's store: dispatch to it, subscribe to it, as to any store. Keep the synced store too: syncing stops
    /// when it goes (the actions dispatched after wait in the outbox for the next synced store made on it).
    public let store: Store<State, Action>
    @usableFromInline let journal: Store<SyncJournal<State, Action>, SyncStep<State, Action>>
    @usableFromInline let engine: SyncEngine<State, Action>

    /// - Parameters:
    ///   - name: The store's name on the server.
    ///   - initialState: The state until the server's first answer, when the outbox is new.
    ///   - reducer: The app's reducer, the one the server hosts.
    ///   - server: The server's base URL (its routes are under it: `stores/{name}` …).
    ///   - token: What the server knows this app by (`Authorization: Bearer …`).
    ///   - outbox: A folder of this store's own, created if missing: the outbox and the state last seen, so that the
    ///     app starts offline where it stopped.
    ///   - outboxLimit: The most actions the outbox holds: an app offline that long is told so
    ///     (``SyncStatus/failed(_:)`` with ``SyncError/outboxFull(limit:)``), and its next actions are not applied
    ///     until the server takes some. Every action in the outbox is applied again at each change the server sends.
    /// - Throws: ``SyncError/badStoreName(_:)``, ``SyncError/outboxInUse(path:)`` while another synced store uses `outbox`, or
    ///   ``SyncError/outboxUnusable(path:reason:)``.
    @inlinable
    public init(
        name: String,
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        server: URL,
        token: String,
        outbox: URL,
        outboxLimit: Int = 100_000
    ) throws(SyncError) {
        guard ClientID.isValid(name) else { throw .badStoreName(name) }
        let lock = try OutboxLock(folder: outbox, name: name)
        let journalReducer = SyncJournal.reducer(reducer, outboxLimit: outboxLimit)
        // Its count is set once the journal is loaded, below, before any step can change it.
        let signals = SyncSignals(pending: 0, outboxLimit: outboxLimit)
        journal = Store(
            initialState: SyncJournal(client: UUID().uuidString, initialState: initialState),
            key: "sync.\(name)",
            storage: FileStorage(directory: outbox),
            // This process is the outbox's only writer (the lock says so).
            externalChanges: .ignore,
            // The lock lives as long as the journal, which `store` keeps alive: no other synced store opens this
            // outbox while this one's journal may still write to it.
            reducer: { (journal: inout SyncJournal<State, Action>, step) -> Effect<SyncStep<State, Action>> in
                let effect = withExtendedLifetime(lock) { journalReducer(&journal, step) }
                let byApp = if case .local = step { true } else { false }
                signals.journalChanged(pending: journal.pending.count, byApp: byApp)
                return effect
            }
        )
        signals.journalLoaded(pending: journal.state.pending.count)
        store = journal.scope(state: \.local, action: { .local($0) })
        engine = SyncEngine(
            journal: journal, connection: SyncConnection(server: server, store: name, token: token), signals: signals
        )
        engine.start()
    }

    /// A synced store whose reducer only changes the state.
    @inlinable
    public convenience init(
        name: String,
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        server: URL,
        token: String,
        outbox: URL,
        outboxLimit: Int = 100_000
    ) throws(SyncError) {
        try self.init(
            name: name, initialState: initialState,
            reducer: { state, action in
                reducer(&state, action)
                return .none
            },
            server: server, token: token, outbox: outbox, outboxLimit: outboxLimit
        )
    }

    deinit {
        engine.stop()
    }

    /// How the store stands with the server now.
    public var status: SyncStatus {
        engine.currentStatus
    }

    /// The status now, then each change.
    public var syncStatus: AsyncStream<SyncStatus> {
        engine.status.values
    }

    /// The sequence number the next action dispatched gets: with ``SyncRefusal/seq``, it tells the refusals of the
    /// actions dispatched since from those of earlier ones.
    public var nextSequenceNumber: Int64 {
        journal.state.nextSeq
    }

    /// The actions the server has not yet applied (or refused), in order.
    public var pendingCount: Int {
        journal.state.pending.count
    }

    /// Writes the outbox to disk now: once it returns, every action dispatched before survives a crash.
    public func flush() throws {
        try journal.flush()
    }

    /// Tells the store that the app has shown the refusals ``SyncStatus/refused(_:)`` lists: the status moves on.
    public func acknowledgeRefusals() {
        engine.acknowledgeRefusals()
    }

    /// Reads the server's state now rather than wait for its feed, and shows it with the pending actions applied
    /// again: for a program that runs once and exits (a command line), which must know it shows the server's latest.
    ///
    /// - Throws: ``SyncError`` when the server cannot be reached or refuses; the store keeps what it showed.
    public func pull() async throws(SyncError) {
        try await engine.pullNow()
    }

    /// Pushes now instead of at the next back-off's end.
    public func syncNow() {
        engine.syncNow()
    }
}
