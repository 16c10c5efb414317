import Foundation
import Hummingbird
import Statehouse
import StatehouseSyncWire
import Synchronization

/// The authoritative copy of named stores, which apps follow offline-first with `SyncedStore` (`StatehouseSync`).
///
/// ```swift
/// let server = SyncServer(storage: try .sqlite(path: "sync.sqlite"), tokens: try SyncTokens([
///     SyncGrant(name: "alice's phone", token: phoneToken, stores: ["tracker": .readWrite]),
/// ]))
/// server.host(store: "tracker", initialState: Tracker(), reducer: trackerReducer)   // the app's own reducer
/// try await server.application(port: 8090).runService()
/// ```
///
/// Each pushed action is applied once, in the order its client sent it, with the store's reducer, and committed with
/// the client's sequence number in one transaction. The wire protocol is `openapi.json`, served at `/openapi.json`.
public final class SyncServer: Sendable {
    public let storage: SyncServerStorage
    let tokens: SyncTokens
    let limits: SyncLimits
    private let hosted = Mutex<[String: Hosting]>([:])

    /// A hosted store, or why it could not be loaded (its requests are answered 503 with the reason).
    enum Hosting: Sendable {
        case store(any AnyHostedStore)
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
        let hosting: Hosting
        do {
            hosting = .store(
                try HostedStore(
                    name: name, initialState: initialState, storage: storage, limits: limits, reducer: reducer,
                    authorize: authorize
                )
            )
        } catch {
            hosting = .unavailable("The stored state of \(name) cannot be read: \(error)")
        }
        hosted.withLock { hosted in
            precondition(hosted[name] == nil, "The store \(name) is hosted already.")
            hosted[name] = hosting
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

    /// The feeds open now on each hosted store.
    public var followerCounts: [String: Int] {
        stores.mapValues(\.followerCount)
    }

    private var stores: [String: any AnyHostedStore] {
        hosted.withLock { $0 }.compactMapValues { hosting in
            if case .store(let store) = hosting { store } else { nil }
        }
    }

    func hosting(_ name: String) -> Hosting? {
        hosted.withLock { $0[name] }
    }
}
