import Foundation
import Hummingbird
import ServiceLifecycle
import Statehouse

/// A live page for any store and container: the state tree, every action with the diff it caused, time travel,
/// export and import. Off unless started; started, it listens on loopback and answers only URLs carrying its random
/// token.
///
/// ```swift
/// let inspector = try await Inspector.start()           // loopback, a free port, a random token
/// inspector.attach(store, name: "app")                 // Encodable state and actions: trees and diffs
/// inspector.attach(theme)                              // a container
/// print("Inspect at", inspector.url)
/// ```
///
/// Attached, a store's `dispatch` pays a copy of the action and the state and an append to a queue: a thread of the
/// inspector's encodes, redacts and diffs them. The inspector keeps the last ``capacity`` changes of each store (a
/// ring), and each page a bounded buffer: a page that stops reading is cut off and resumes where it was. It holds
/// stores and containers weakly.
public final class Inspector: Sendable {
    /// The page's address, with the token: the only way in.
    public let url: URL
    /// How many changes of each store the log keeps.
    public let capacity: Int
    let registry: InspectorRegistry
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(url: URL, capacity: Int, registry: InspectorRegistry, group: ServiceGroup, running: Task<Void, any Error>) {
        self.url = url
        self.capacity = capacity
        self.registry = registry
        self.group = group
        self.running = running
    }

    /// Starts the inspector's server, and returns once it listens.
    ///
    /// - Parameters:
    ///   - host: The address to listen on; loopback by default, so that only this machine reaches the page.
    ///   - port: The port; 0 for any free one (see ``url``).
    ///   - allowedHosts: The names, beyond loopback's, that requests may address (the `Host` header): a name that
    ///     reaches this machine, for a page opened from another one. Required to listen beyond loopback.
    ///   - capacity: How many changes of each store the log keeps.
    ///   - bufferPerPage: How many events may wait for one page before it is cut off (it then resumes).
    /// - Throws: ``InspectorStartError`` for a host beyond loopback without `allowedHosts`, or a capacity below 1;
    ///   the server's error if it cannot listen.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, allowedHosts: [String] = [], capacity: Int = 10_000,
        bufferPerPage: Int = 10_000
    ) async throws -> Inspector {
        guard capacity > 0, bufferPerPage > 0 else { throw InspectorStartError.capacity }
        guard HostRules.isLoopback(HostRules.hostname(of: host)) || !allowedHosts.isEmpty else {
            throw InspectorStartError.beyondLoopback(host)
        }
        let token = randomToken()
        let registry = InspectorRegistry(capacity: capacity, bufferPerPage: bufferPerPage)
        let requestGuard = InspectorGuard(token: token, listeningHost: host, allowedHosts: allowedHosts)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: InspectorRoutes.router(registry: registry, guard: requestGuard),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "statehouse-inspector"),
            onServerRunning: { channel in listening.yield(channel.localAddress?.port ?? port) }
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: application.logger))
        let running = Task {
            defer { listening.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            // The server stopped before it listened: its error says why.
            try await running.value
            throw InspectorStartError.didNotListen
        }
        let shownHost = ["0.0.0.0", "::", ""].contains(host) ? (allowedHosts.first ?? "127.0.0.1") : host
        let authority = shownHost.contains(":") ? "[\(shownHost)]:\(boundPort)" : "\(shownHost):\(boundPort)"
        return Inspector(
            url: URL(string: "http://\(authority)/\(token)/")!, capacity: capacity, registry: registry, group: group,
            running: running
        )
    }

    /// 192 bits from the system's secure generator, as hex.
    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<3).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    /// Attaches `store` under `name`, replacing a store attached under that name: its state and actions show as
    /// trees of their encodings, and each change as the paths it changed.
    ///
    /// - Parameters:
    ///   - store: A root store (a scoped store's actions are its parent's).
    ///   - name: What the page calls it: 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    ///   - redacting: The members whose values never reach the page.
    ///   - allowsJumps: Whether the page may move the store to a past state ("jump") and back ("resume"). Taken only
    ///     for a store that is not persisted (a state shown would be written, and other processes would take it);
    ///     the log then keeps a state value per change, as well as the trees.
    @inlinable
    public func attach<State: Encodable & Sendable, Action: Encodable & Sendable>(
        _ store: Store<State, Action>, name: String, redacting: InspectorRedaction = .none, allowsJumps: Bool = false
    ) {
        let (intake, tap, state) = Self.tapped(store, capacity: capacity)
        attachEncoding(store, name: name, redacting: redacting, allowsJumps: allowsJumps, tapped: (intake, tap, state))
    }

    /// Attaches `store`, whose state or actions are not `Encodable`, under `name`: each shows as the text its
    /// `ValueRedaction` lets through (the whole text is one node of the tree).
    @inlinable @_disfavoredOverload
    public func attach<State: Sendable, Action: Sendable>(
        _ store: Store<State, Action>, name: String, state: ValueRedaction<State> = .described,
        actions: ValueRedaction<Action> = .described, allowsJumps: Bool = false
    ) {
        let tapped = Self.tapped(store, capacity: capacity)
        attachDescribing(store, name: name, state: state, actions: actions, allowsJumps: allowsJumps, tapped: tapped)
    }

    /// Taps `store` into an intake. Inlined into the app's code, so that the tap, which runs on every `dispatch`,
    /// is compiled for the store's types: made in the inspector's own generic code, it copied the event through
    /// the types' metadata, at twice the cost of the whole `dispatch`.
    @inlinable
    static func tapped<State: Sendable, Action: Sendable>(
        _ store: Store<State, Action>, capacity: Int
    ) -> (Intake<StoreEvent<State, Action>>, StoreTap, State) {
        let intake = Intake<StoreEvent<State, Action>>(capacity: capacity)
        let (tap, state) = store.tap { intake.append($0) }
        return (intake, tap, state)
    }

    @usableFromInline
    func attachEncoding<State: Encodable & Sendable, Action: Encodable & Sendable>(
        _ store: Store<State, Action>, name: String, redacting: InspectorRedaction, allowsJumps: Bool,
        tapped: (Intake<StoreEvent<State, Action>>, StoreTap, State)
    ) {
        attach(store, name: name, description: .encoding(redacting: redacting), allowsJumps: allowsJumps, tapped: tapped)
    }

    @usableFromInline
    func attachDescribing<State: Sendable, Action: Sendable>(
        _ store: Store<State, Action>, name: String, state: ValueRedaction<State>, actions: ValueRedaction<Action>,
        allowsJumps: Bool, tapped: (Intake<StoreEvent<State, Action>>, StoreTap, State)
    ) {
        attach(
            store, name: name, description: .describing(state: state, actions: actions), allowsJumps: allowsJumps,
            tapped: tapped
        )
    }

    private func attach<State: Sendable, Action: Sendable>(
        _ store: Store<State, Action>, name: String, description: StoreDescription<State, Action>, allowsJumps: Bool,
        tapped: (intake: Intake<StoreEvent<State, Action>>, tap: StoreTap, state: State)
    ) {
        guard Self.isValidName(name) else {
            tapped.tap.cancel()
            preconditionFailure("A store's name in the inspector is 1 to 64 characters of A-Z a-z 0-9 . _ -, not \(name).")
        }
        registry.add(InspectedStore(
            store, name: name, description: description, allowsJumps: allowsJumps, capacity: capacity, hub: registry.hub,
            intake: tapped.intake, storeTap: tapped.tap, state: tapped.state
        ))
    }

    /// Attaches `container` by its key, replacing one attached with that key: its value shows as the text `values`
    /// lets through, with its listeners, its last change and whether that came from another process.
    public func attach<Value: Sendable>(_ container: StateContainer<Value>, values: ValueRedaction<Value> = .described) {
        registry.add(InspectedContainer(container, values: values, hub: registry.hub))
    }

    /// Stops following the store attached as `name`.
    public func detach(store name: String) {
        registry.removeSource(named: name)
    }

    /// Stops following the container of `key`.
    public func detach(container key: String) {
        registry.removeContainer(key: key)
    }

    /// Detaches everything and stops the server; open pages' feeds end.
    public func stop() async {
        registry.detachAll()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
    }

    static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || ".-_".unicodeScalars.contains(scalar))
        }
    }
}

/// Why ``Inspector/start(host:port:allowedHosts:capacity:bufferPerPage:)`` did not start.
public enum InspectorStartError: Error, Equatable, CustomStringConvertible {
    /// Listening beyond loopback, without names to allow: anyone on the network could reach the page.
    case beyondLoopback(String)
    case capacity
    case didNotListen

    public var description: String {
        switch self {
        case .beyondLoopback(let host):
            "The inspector listens on loopback unless told otherwise: to listen on \(host), pass allowedHosts, the names the page is opened by."
        case .capacity:
            "The log's capacity and a page's buffer hold at least one change."
        case .didNotListen:
            "The inspector's server stopped before it listened."
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(length - count, 0)) + self
    }
}
