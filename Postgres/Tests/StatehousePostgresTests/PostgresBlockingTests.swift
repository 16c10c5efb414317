import Foundation
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
