import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import Testing

/// The synchronous operations never deadlock: not on an event loop, not with every cooperative thread blocked, not
/// with a client that is not running.
@Suite(.serialized)
struct PostgresBlockingTests {
    /// A client pointing nowhere, never run: nothing here reaches a server.
    private static func idleClient() -> PostgresClient {
        PostgresClient(configuration: .init(
            host: "127.0.0.1", port: 1, username: "nobody", password: "secret-password", database: nil, tls: .disable
        ))
    }

    @Test func anOperationOnAnEventLoopThrowsInsteadOfBlockingIt() async throws {
        let storage = PostgresStorage(client: Self.idleClient(), table: "state")
        let outcome = try await MultiThreadedEventLoopGroup.singleton.next().submit {
            Result { try storage.load(key: "k") }
        }.get()
        let error = try #require(throws: StorageError.self) { try outcome.get() }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.operation == .load)
        #expect(error.message.contains("event-loop thread"))
    }

    @Test func anOperationWhoseClientIsNotRunningThrowsAfterItsTimeout() async throws {
        let storage = PostgresStorage(client: Self.idleClient(), table: "state", timeout: .milliseconds(200))
        let error = try #require(throws: StorageError.self) { try storage.save(Data("value".utf8), key: "k") }
        #expect(error.kind == .io)
        #expect(error.key == "k")
        #expect(error.operation == .save)
        #expect(error.message.contains("run()"))
        #expect(!error.message.contains("secret-password"))
    }

    /// The window: a client started only after blocking callers hold every thread of the cooperative
    /// pool, each waiting for a connection that only the client's `run()` can open.
    @Test(.enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
    func aClientStartedWhileEveryCooperativeThreadWaitsForItStillConnects() async throws {
        let client = PostgresClient(configuration: try cluster.clientConfiguration)
        // A deadlock never connects; a busy machine under ThreadSanitizer may take a while to.
        let storage = PostgresStorage(client: client, table: uniqueTable(), timeout: .seconds(120))
        let width = ProcessInfo.processInfo.activeProcessorCount
        let everyThreadHeld = ThreadBarrier(count: width)
        let running = NIOLockedValueBox<Task<Void, Never>?>(nil)
        defer { running.withLockedValue { $0?.cancel() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<width {
                group.addTask {
                    let isLast = try everyThreadHeld.arriveAndWait(timeout: .seconds(120))
                    if isLast {
                        let task = Task(executorPreference: PostgresStorage.executor) { await client.run() }
                        running.withLockedValue { $0 = task }
                    }
                    try storage.save(Data("\(index)".utf8), key: "k\(index)")
                }
            }
            try await group.waitForAll()
        }
        for index in 0..<width {
            #expect(try storage.load(key: "k\(index)") == Data("\(index)".utf8))
        }
    }

    @Test(.enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
    func callersBlockingEveryCooperativeThreadStillGetTheirConnections() async throws {
        try await withStorage { storage in
            // More blocking callers than the pool has threads, on a client that has no connection yet: each needs
            // the client's run() to open one, which runs on an event loop, not on the blocked pool.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<(ProcessInfo.processInfo.activeProcessorCount * 4) {
                    group.addTask {
                        for _ in 0..<10 {
                            _ = try storage.transact(key: "k\(index % 3)") { data in
                                Data("\((data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0) + 1)".utf8)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = try (0..<3).map { try storage.load(key: "k\($0)").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0 }
            #expect(total.reduce(0, +) == ProcessInfo.processInfo.activeProcessorCount * 40)
        }
    }
}

/// Holds `count` threads until all of them arrived: with one per thread of the cooperative pool, the pool has no
/// thread left for anything else until they go on.
private final class ThreadBarrier: Sendable {
    private let count: Int
    private let arrived = NIOLockedValueBox(0)
    private let released = DispatchSemaphore(value: 0)

    init(count: Int) {
        self.count = count
    }

    /// Blocks until every thread arrived; `true` for the last to arrive, which releases the others.
    func arriveAndWait(timeout: Duration) throws -> Bool {
        let position = arrived.withLockedValue { arrived in
            arrived += 1
            return arrived
        }
        if position == count {
            for _ in 1..<count { released.signal() }
            return true
        }
        let seconds = Double(timeout.components.seconds)
        guard released.wait(timeout: .now() + seconds) == .success else {
            throw BarrierTimeout()
        }
        return false
    }

    struct BarrierTimeout: Error {}
}
