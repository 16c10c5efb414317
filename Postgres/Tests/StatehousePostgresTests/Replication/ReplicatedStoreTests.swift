import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Replicated stores in this process on a private cluster: they converge, catch up, keep effects to themselves,
/// catch a reducer that is not deterministic, and survive lost connections.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ReplicatedStoreTests {
    @Test func twoStoresOnOneLogDispatchedToFromManyThreadsConverge() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let issues = Recorder<ReplicationIssue>()
            let stores = try (0..<2).map { _ in try makeReplica(client, log: log, issues: issues) }
            let seen = Recorder<Int>()
            let token = stores[1].store.subscribe(\.count) { seen.append($0) }
            defer { token.cancel() }
            try await whileRunning(stores) {
                // A store starting later would take the newest snapshot instead of every action before it.
                for store in stores { await store.waitUntilCaughtUp() }
                try await onThread {
                    DispatchQueue.concurrentPerform(iterations: 8) { thread in
                        for _ in 0..<25 { stores[thread % 2].dispatch(.increment(tag: Int64(thread))) }
                    }
                }
                #expect(await everyStore(stores, appliedThrough: 200))
                // Before leaving (which cancels the runs): a store may apply its last batch before its append loop
                // took in the append's answer, and a run cancelled then keeps the batch queued; and `appliedSequence`
                // moves before a scoped store's subscribers are told.
                #expect(await eventually { stores.allSatisfy { $0.pendingCount == 0 } }, "\(stores.map(\.pendingCount))")
                #expect(await eventually { seen.elements.last == 200 }, "\(seen.elements.suffix(3))")
            }
            #expect(stores[0].state == stores[1].state)
            #expect(stores[0].state.count == 200)
            #expect(stores.map(\.pendingCount) == [0, 0])
            // Each action's result, in order, to a subscriber of the store that did not dispatch half of them.
            #expect(seen.elements == Array(0...200))
            #expect(try cluster.sql("SELECT count(*), min(sequence), max(sequence) FROM \(log)") == "200|1|200")
            #expect(issues.elements.isEmpty)
        }
    }

    @Test func sendReturnsOnceTheActionIsAppliedHere() async throws {
        try await withClient { client in
            let store = try makeReplica(client, log: uniqueTable())
            try await whileRunning([store]) {
                store.dispatch(.numbered(1))
                let sequence = try await store.send(.numbered(2))
                #expect(sequence == 2)
                #expect(store.appliedSequence >= 2)
                #expect(store.state.lastNumber == 2)
                #expect(store.state.numbersInOrder)
            }
        }
    }

    /// postgres-nio's error keeps the failed append's query, whose parameters hold the encoded action.
    @Test func anAppendTheServerRefusesFailsWithACauseThatHoldsNoAction() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let store = try makeReplica(client, log: log)
            try await whileRunning([store]) {
                await store.waitUntilCaughtUp()
                try cluster.sql("ALTER TABLE \(log) ADD CONSTRAINT small CHECK (octet_length(action) < 5) NOT VALID")
                let error = await #expect(throws: StorageError.self) { try await store.send(.numbered(987_654_321)) }
                let encoded = String(decoding: try JSONEncoder().encode(CounterAction.numbered(987_654_321)), as: UTF8.self)
                #expect(!dumped(error).contains("987654321"))
                #expect(!dumped(error).contains(hexBytes(of: encoded)))
                #expect(!dumped(error).contains(hexBytes(of: "987654321")))
                let cause = try #require(error?.cause as? PostgresErrorCause, "\(String(describing: error))")
                #expect(cause.sqlState == "23514")
            }
        }
    }

    @Test func aStoreStartingLaterCatchesUpFromTheNewestSnapshotAndTheLogAfterIt() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let first = try makeReplica(client, log: log, snapshotEvery: 10)
            try await whileRunning([first]) {
                for number in 1...25 { first.dispatch(.numbered(Int64(number))) }
                #expect(await everyStore([first], appliedThrough: 25))
                #expect(await eventually(every: psqlPolling) { (try? cluster.sql("SELECT max(sequence) FROM \(log)_snapshots")) == "20" })
            }
            // Without the actions the snapshot covers, only the snapshot can bring a new store to 25.
            try cluster.sql("DELETE FROM \(log) WHERE sequence <= 20")
            let later = try makeReplica(client, log: log, snapshotEvery: 10)
            try await whileRunning([later]) {
                await later.waitUntilCaughtUp()
                #expect(later.appliedSequence == 25)
                #expect(later.state == first.state)
                #expect(later.state.numbersInOrder && later.state.count == 25)
            }
        }
    }

    @Test func effectsRunOnlyInTheStoreThatDispatchedTheAction() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let effects = [Recorder<Int>(), Recorder<Int>()]
            let stores = try effects.map { try makeReplica(client, log: log, effects: $0) }
            try await whileRunning(stores) {
                try await stores[0].send(.ping)
                // The effect's `.pong` goes through the log too: both stores apply it.
                #expect(await everyStore(stores, appliedThrough: 2))
            }
            #expect(effects.map(\.count) == [1, 0])
            #expect(stores.map(\.state.pongs) == [1, 1])
        }
    }

    @Test func aReducerThatIsNotDeterministicIsReportedByVerifyDeterminism() async throws {
        try await withClient { client in
            let issues = Recorder<ReplicationIssue>()
            let store = try makeReplica(client, log: uniqueTable(), issues: issues)
            try await whileRunning([store]) {
                try await store.send(.increment(tag: 1))
                try await store.send(.scribble)
            }
            #expect(issues.elements.map(\.kind) == [.nondeterministicReducer])
            #expect(issues.elements.first?.sequence == 2)
            #expect(issues.elements.first?.message.contains("Pass such values in the action") == true)
        }
    }

    @Test func storesWhoseConnectionsAreKilledMidStreamConvergeWithNoActionLostOrDoubled() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let issues = Recorder<ReplicationIssue>()
            let stores = try (0..<2).map { _ in try makeReplica(client, log: log, issues: issues) }
            try await whileRunning(stores) {
                let dispatching = Task.detached {
                    for number in 1...400 {
                        stores[0].dispatch(.numbered(Int64(number)))
                        if number % 20 == 0 { try? await Task.sleep(for: .milliseconds(5)) }
                    }
                }
                var killed = 0
                for _ in 0..<8 {
                    try await Task.sleep(for: .milliseconds(30))
                    killed += try cluster.terminateConnections()
                }
                await dispatching.value
                #expect(killed > 0)
                // Each kill may leave a query unanswered until its 5-second timeout.
                #expect(await everyStore(stores, appliedThrough: 400, timeout: .seconds(180)), "\(stores.map(\.appliedSequence)), \(stores.map(\.pendingCount)) pending")
            }
            #expect(stores[0].state == stores[1].state)
            #expect(stores[0].state.count == 400)
            #expect(stores[0].state.numbersInOrder)
            #expect(try cluster.sql("SELECT count(*), max(sequence) FROM \(log)") == "400|400")
            // Lost connections are retried without a word (a LISTEN cut off is a lost connection, not an unreadable log).
            #expect(issues.elements.isEmpty, "\(issues.elements)")
        }
    }

    /// The store's pool holds idle connections whose server processes hang (SIGSTOP: as connections a NAT forgot),
    /// and its follower loses its listening connection: it leases a hanging one and sends `LISTEN` on it. The
    /// listening connection's heartbeat covers its migration and `LISTEN` too (the 1 s safety net's reads start only
    /// once listening): the follower comes back on another connection and applies an action another store appended
    /// meanwhile.
    @Test func aReplicatedStoreLeasingASilentlyDeadPooledConnectionComesBack() async throws {
        let name = "replica_" + uniqueTable()
        var configuration = try clientConfiguration(named: name)
        // As the documentation recommends where connections may die silently: postgres-nio's keep-alive query on a
        // dead idle connection waits without a deadline, and leases wait behind it (a limitation of its pool).
        configuration.options.keepAliveBehavior = nil
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        let log = uniqueTable()
        try await withClient(configuration: configuration) { client in
            let store = try makeReplica(client, log: log)
            try await whileRunning([store]) {
                await store.waitUntilCaughtUp()
                #expect(try await eventually(every: psqlPolling) { try sessions(named: name, where: "query LIKE 'LISTEN%'").count == 1 })
                let listener = try #require(try sessions(named: name, where: "query LIKE 'LISTEN%'").first)
                try await fillPool(client, count: 3)
                for pid in try sessions(named: name, where: "pid <> \(listener) AND state = 'idle'") {
                    stopped.append(pid)
                    kill(pid, SIGSTOP)
                }
                #expect(stopped.elements.count >= 1)
                _ = try cluster.sql("SELECT pg_terminate_backend(\(listener))")
                try await withClient { other in
                    let otherStore = try makeReplica(other, log: log)
                    try await whileRunning([otherStore]) { _ = try await otherStore.send(.numbered(1)) }
                }
                let applied = await everyStore([store], appliedThrough: 1, timeout: .seconds(120))
                let seen = try cluster.sql(
                    "SELECT pid, state, left(query, 40) FROM pg_stat_activity WHERE application_name = '\(name)'"
                )
                let unread = try stopped.elements.map { "\($0): \(try serverSocket(of: $0)?.unread ?? -1)" }
                #expect(
                    applied,
                    "the store never applied the other store's action; its sessions: \(seen); bytes unread by the stopped ones: \(unread)"
                )
            }
        }
    }
}

/// What a replicated store refuses before it touches a server.
@Suite struct ReplicatedStoreConfigurationTests {
    private static let client = PostgresClient(configuration: .init(
        host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none", tls: .disable
    ))

    @Test(arguments: [
        "", "Actions", "1actions", "actions; DROP TABLE users", "actions-log", "act\u{0}ions", "äctions",
        String(repeating: "a", count: 49),
    ])
    func badLogNamesAreRefusedAsInvalidConfiguration(_ name: String) {
        #expect {
            _ = try makeReplica(Self.client, log: name)
        } throws: { error in
            (error as? StorageError)?.kind == .invalidConfiguration
                && (error as? StorageError)?.message.contains("lowercase letters") == true
        }
    }

    @Test func aSnapshotIntervalBelowOneIsRefused() {
        #expect {
            _ = try makeReplica(Self.client, log: "actions", snapshotEvery: 0)
        } throws: { error in
            (error as? StorageError)?.kind == .invalidConfiguration
        }
    }

    @Test func aValidNameIsTakenWithoutConnecting() throws {
        let store = try makeReplica(Self.client, log: String(repeating: "a", count: 48))
        #expect(store.appliedSequence == 0)
        #expect(store.state == Counter())
    }
}
