#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Synchronization

/// A TCP relay between the tracker and a PostgreSQL server on loopback that can lose an answer on purpose: the
/// answer to the next `COMMIT` (after the server sent it, so the transaction committed), as a network that fails at
/// the worst moment does, taking every relayed connection with it; new connections can then be refused for a
/// while, as a network that takes time to come back does.
///
/// On blocking sockets and threads of its own (two per relayed connection, few in a test), which hold it until
/// ``close()``: call it when done.
public final class PostgresProxy: Sendable {
    public let port: Int
    private let listener: Int32
    private let serverPort: Int
    private let state = Mutex(State())

    private struct State {
        var losesNextCommitAnswer = false
        var losesItAlone = false
        var refusalAfterTheLoss = Duration.zero
        var refusingUntil: ContinuousClock.Instant?
        var lostCommitAnswers = 0
        var relays: [Relay] = []
        var closed = false
    }

    /// Listens on a free loopback port and relays to `serverPort`.
    public init(to serverPort: Int) throws {
        self.serverPort = serverPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && Glibc.listen(listener, 64) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard listener >= 0, bound else {
            Foundation.close(listener)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the proxy could not listen"])
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// The answer to the next `COMMIT` a client sends is dropped, and its connection closed on both sides, once the
    /// server has answered (so the commit happened), with every other relayed connection unless `alone`; then new
    /// connections are refused for `refusal`.
    public func loseTheNextCommitAnswer(alone: Bool = false, thenRefuseConnectionsFor refusal: Duration = .zero) {
        state.withLock {
            $0.losesNextCommitAnswer = true
            $0.losesItAlone = alone
            $0.refusalAfterTheLoss = refusal
        }
    }

    /// Every connection relayed so far stops passing anything, either way, and stays open, as one a NAT or a
    /// firewall forgot does: nothing tells either end. New connections are relayed as before.
    public func blackHoleOpenConnections() {
        for relay in state.withLock({ $0.relays }) { relay.blackHoled.store(true, ordering: .sequentiallyConsistent) }
    }

    /// How many `COMMIT` answers were dropped.
    public var lostCommitAnswers: Int { state.withLock { $0.lostCommitAnswers } }

    /// Stops relaying: the listener and every relayed connection are shut down.
    public func close() {
        let relays = state.withLock { state -> [Relay]? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.relays
        }
        guard let relays else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for relay in relays { relay.shutDown() }
    }

    private func acceptConnections() {
        defer { Foundation.close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let (closed, refusing) = state.withLock { state in
                (state.closed, state.refusingUntil.map { ContinuousClock.now < $0 } == true)
            }
            if closed { Foundation.close(client); return }
            if refusing { Foundation.close(client); continue }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: serverPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                Foundation.close(client)
                Foundation.close(server)
                continue
            }
            let relay = Relay(client: client, server: server)
            state.withLock { $0.relays.append(relay) }
            Thread.detachNewThread { [self] in pump(relay, towardServer: true) }
            Thread.detachNewThread { [self] in pump(relay, towardServer: false) }
        }
    }

    /// One relayed connection: its two sockets, closed by the second of its two pumps to end.
    private final class Relay: Sendable {
        let client: Int32
        let server: Int32
        /// Whether the client sent the `COMMIT` whose answer is to be lost.
        let commitSent = Atomic(false)
        /// Whether what arrives is dropped instead of relayed.
        let blackHoled = Atomic(false)
        private let pumpsEnded = Atomic(0)
        /// Until both sockets are closed: a closed descriptor's number may be another socket's by then.
        private let open = Mutex(true)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        /// Wakes both pumps: each sees its socket end.
        func shutDown() {
            open.withLock { open in
                guard open else { return }
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(server, Int32(SHUT_RDWR))
            }
        }

        func pumpEnded() {
            shutDown()
            guard pumpsEnded.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue == 2 else { return }
            open.withLock { open in
                open = false
                Foundation.close(client)
                Foundation.close(server)
            }
        }
    }

    private func pump(_ relay: Relay, towardServer: Bool) {
        defer { relay.pumpEnded() }
        let (source, destination) = towardServer ? (relay.client, relay.server) : (relay.server, relay.client)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(source, &buffer, buffer.count, 0)
            guard count > 0 else { return }
            if relay.blackHoled.load(ordering: .sequentiallyConsistent) { continue }
            let chunk = buffer[..<count]
            if towardServer, chunk.contains(Self.commit) {
                let armed = state.withLock { state in
                    defer { state.losesNextCommitAnswer = false }
                    return state.losesNextCommitAnswer
                }
                if armed { relay.commitSent.store(true, ordering: .sequentiallyConsistent) }
            }
            if !towardServer, relay.commitSent.load(ordering: .sequentiallyConsistent), chunk.contains(Self.commit) {
                // The server said COMMIT: the transaction landed, and its client never hears of it. Unless the
                // loss is this connection's alone, the network is down for everyone: every relayed connection
                // ends, and new ones are refused for a while.
                let relays = state.withLock { state in
                    state.lostCommitAnswers += 1
                    state.refusingUntil = ContinuousClock.now + state.refusalAfterTheLoss
                    guard !state.losesItAlone else { return [relay] }
                    defer { state.relays = [] }
                    return state.relays
                }
                for relay in relays { relay.shutDown() }
                return
            }
            let sent = chunk.withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == count else { return }
        }
    }

    private static let commit = Array("COMMIT".utf8)

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

private extension ArraySlice where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(_ needle: [UInt8]) -> Bool {
        guard count >= needle.count else { return false }
        var index = startIndex
        while index + needle.count <= endIndex {
            if self[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}

extension TemporaryPostgresDatabase {
    /// The database's URL, through `proxy`.
    public func url(through proxy: PostgresProxy) -> String {
        url.replacingOccurrences(of: "@127.0.0.1:\(port)/", with: "@127.0.0.1:\(proxy.port)/")
    }
}
#endif
