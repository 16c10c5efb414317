import Foundation
import Hummingbird
import Statehouse
import StatehouseSyncWire
import Synchronization

/// The authoritative copy of named stores and containers, which apps follow offline-first with `SyncedStore` and
/// `RemoteStorage` (`StatehouseSync`).
///
/// ```swift
/// let server = SyncServer(storage: try .sqlite(path: "sync.sqlite"), tokens: try SyncTokens([
///     SyncGrant(name: "alice's phone", token: phoneToken, stores: ["tracker": .readWrite]),
/// ]))
/// server.host(store: "tracker", initialState: Tracker(), reducer: trackerReducer)   // the app's own reducer
/// server.host(container: "settings", of: Settings.self)
/// try await server.application(port: 8090).runService()
/// ```
///
/// Each pushed action is applied once, in the order its client sent it, with the store's reducer, and committed with
/// the client's sequence number in one transaction. A container's value is replaced only by a write that names the
/// version it replaces (`If-Match`), so that no client overwrites a value it never saw. The wire protocol is `openapi.json`, served at `/openapi.json`.
public final class SyncServer: Sendable {
    public let storage: SyncServerStorage
    let tokens: SyncTokens
    package let limits: SyncLimits
    private let hostedStores = Mutex<[String: Hosting<any AnyHostedStore>]>([:])
    private let hostedContainers = Mutex<[String: Hosting<any AnyHostedContainer>]>([:])

    /// A hosted store or container, or why it could not be loaded (its requests are answered 503 with the reason).
    enum Hosting<Hosted: Sendable>: Sendable {
        case hosted(Hosted)
        case unavailable(String)
    }

    public init(storage: SyncServerStorage, tokens: SyncTokens, limits: SyncLimits = SyncLimits()) {
        self.storage = storage
        self.tokens = tokens
        self.limits = limits
    }

    /// Hosts the store `name`: pushes to it are applied with `reducer`, whose effects the server does not run (they
    /// are the app's). Its state is loaded from the storage, or starts as `initialState`.
    ///
    /// - Parameters:
    ///   - name: The store's name in the routes (`/stores/{name}`).
    ///   - initialState: The state before the first push, when the storage holds none.
    ///   - reducer: The app's reducer. One that throws refuses the action: it is handled, not applied, and the client
    ///     is told why.
    ///   - authorize: Asked before each action is applied; a refusal is reported to the client as the reducer's is.
    public func host<State: Codable & Sendable, Action: Codable & Sendable>(
        store name: String,
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict = { _, _ in .allow }
    ) {
        host(store: name) {
            try HostedStore(
                name: name, initialState: initialState, storage: storage, limits: limits, reducer: reducer,
                authorize: authorize
            )
        }
    }

    /// Hosts the store `name` whose authoritative state the app keeps itself: its own database, which its other
    /// programs change too. The server's storage then keeps only the clients' sequence numbers and the cursor.
    ///
    /// - Parameters:
    ///   - name: The store's name in the routes (`/stores/{name}`).
    ///   - currentState: Reads the state where the app keeps it.
    ///   - reducer: Applies an action where the app keeps the state, in a transaction of its own, and leaves `state`
    ///     as it reads back. The server's storage commits the client's sequence number after it: a server killed in
    ///     between has the client push the action again, so the reducer must recognize an action it applied (give
    ///     actions an id, and keep the ids applied in the same transaction).
    ///   - authorize: Asked before each action is applied.
    ///
    /// Call ``stateChanged(store:)`` whenever the state changes by other means, so that followers hear of it.
    public func host<State: Codable & Sendable, Action: Codable & Sendable>(
        store name: String,
        keptBy currentState: @escaping @Sendable () throws -> State,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict = { _, _ in .allow }
    ) {
        host(store: name) {
            try HostedStore(
                name: name, initialState: try currentState(), source: currentState, storage: storage, limits: limits,
                reducer: reducer, authorize: authorize
            )
        }
    }

    /// Hosts the store `make` makes, or answers its requests 503 with why it could not be made.
    package func host(store name: String, _ make: () throws -> any AnyHostedStore) {
        let hosting: Hosting<any AnyHostedStore>
        do {
            hosting = .hosted(try make())
        } catch {
            hosting = .unavailable("The stored state of \(name) cannot be read: \(error)")
        }
        hostedStores.withLock { hosted in
            precondition(hosted[name] == nil, "The store \(name) is hosted already.")
            hosted[name] = hosting
        }
    }

    /// Tells the store `name`, hosted with `keptBy`, that its state may have changed by other means than pushes: it
    /// reads it again, soon, and sends it to its followers if it differs from what they have.
    public func stateChanged(store name: String) {
        if case .hosted(let store) = hosting(store: name) { store.stateChangedElsewhere() }
    }

    /// Hosts the container `key`: clients read it, follow it, and replace it with writes that name the version they
    /// replace (`RemoteStorage` in `StatehouseSync` does). A body that is not JSON of `type` is refused (400).
    ///
    /// - Parameters:
    ///   - key: The container's key in the routes (`/containers/{key}`): 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    ///   - type: The container's value type, as the app's `StateContainer` encodes it (JSON).
    public func host<Value: Codable & Sendable>(container key: String, of type: Value.Type) {
        host(container: key) { try HostedContainer(key: key, storage: storage, reject: rejectingAllBut(type)) }
    }

    /// Hosts the container `make` makes, or answers its requests 503 with why it could not be made.
    package func host(container key: String, _ make: () throws -> any AnyHostedContainer) {
        precondition(ClientID.isValid(key), "A hosted container's key is 1 to 64 characters of A-Z a-z 0-9 . _ -.")
        let hosting: Hosting<any AnyHostedContainer>
        do {
            hosting = .hosted(try make())
        } catch {
            hosting = .unavailable("The stored value of \(key) cannot be read: \(error)")
        }
        hostedContainers.withLock { hosted in
            precondition(hosted[key] == nil, "The container \(key) is hosted already.")
            hosted[key] = hosting
        }
    }

    /// Hosts the store `name` with a reducer that returns effects; the server applies its state changes and drops
    /// its effects.
    @_disfavoredOverload
    public func host<State: Codable & Sendable, Action: Codable & Sendable>(
        store name: String,
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict = { _, _ in .allow }
    ) {
        host(store: name, initialState: initialState, reducer: { state, action in _ = reducer(&state, action) }, authorize: authorize)
    }

    /// The clients that ever pushed to each hosted store.
    public var clientCounts: [String: Int] {
        stores.mapValues(\.clientCount)
    }

    /// The clients that ever pushed to the store `name`, the latest first.
    public func clients(of name: String) throws -> [SyncClientSummary] {
        // A store not hosted now may have clients in the storage, from when it was.
        guard case .hosted(let store) = hosting(store: name) else { return try storage.clients(of: name) }
        return try store.clients()
    }

    /// The feeds open now on each hosted store.
    public var followerCounts: [String: Int] {
        stores.mapValues(\.followerCount)
    }

    /// The feeds open now on each hosted container.
    public var containerFollowerCounts: [String: Int] {
        hostedContainers.withLock { $0 }.compactMapValues { hosting in
            if case .hosted(let container) = hosting { container.followerCount } else { nil }
        }
    }

    private var stores: [String: any AnyHostedStore] {
        hostedStores.withLock { $0 }.compactMapValues { hosting in
            if case .hosted(let store) = hosting { store } else { nil }
        }
    }

    func hosting(store name: String) -> Hosting<any AnyHostedStore>? {
        hostedStores.withLock { $0[name] }
    }

    func hosting(container key: String) -> Hosting<any AnyHostedContainer>? {
        hostedContainers.withLock { $0[key] }
    }
}
