import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseServer
import StatehouseServerPostgres
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// Several server instances on PostgreSQL action logs serve one store and one container: a push to any of them
/// reaches the clients of every other, applied once, with the same answers, refusals and conflicts wherever a batch
/// comes again; a feed resumes on another instance by its cursor; an instance started later serves only once it
/// caught up; a container's versions are one sequence on every instance.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled))
struct ReplicatedServerTests {
    @Test func aPushToOneInstanceReachesTheClientsOfAnother() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            let first = try synced(a.running.url)
            let second = try synced(b.running.url)
            let heard = Recorder<Int>()
            let token = second.store.subscribe(\.total) { heard.append($0) }
            defer { token.cancel() }
            first.store.dispatch(.count(42))
            #expect(await eventually { heard.elements.last == 42 })
            second.store.dispatch(.add("from b"))
            #expect(await eventually { first.store.state.entries == ["from b"] })
            #expect(await eventually { first.status == .synced && second.status == .synced })
            let onA = try await a.running.snapshot(client: "x")
            let onB = try await b.running.snapshot(client: "x")
            #expect(onA.state == Tracker(entries: ["from b"], total: 42) && onB.state == onA.state)
            #expect(onA.cursor == 2 && onB.cursor == 2)
        }
    }

    /// The same batch pushed to two instances, one after the other and at once, is applied once, and both answer
    /// the same.
    @Test func aBatchPushedToTwoInstancesIsAppliedOnce() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            let batch: [(Int64, TrackerAction)] = [(1, .add("a")), (2, .count(5)), (3, .add("b"))]
            let first = try await a.running.push(batch)
            let again = try await b.running.push(batch)
            #expect(first.status == 200 && again.status == 200)
            #expect(try first.decoded(PushAnswer.self) == PushAnswer(handledThrough: 3, refused: [], cursor: 3))
            #expect(try again.decoded(PushAnswer.self) == PushAnswer(handledThrough: 3, refused: [], cursor: 3))

            let next: [(Int64, TrackerAction)] = [(4, .count(1)), (5, .count(1))]
            async let onA = a.running.push(next)
            async let onB = b.running.push(next)
            let answers = try await [onA, onB]
            #expect(answers.allSatisfy { $0.status == 200 })
            #expect(try answers.map { try $0.decoded(PushAnswer.self).handledThrough } == [5, 5])
            for instance in instances {
                #expect(try await eventuallyAsync { try await instance.running.snapshot().cursor == 5 })
                let snapshot = try await instance.running.snapshot()
                #expect(snapshot.state == Tracker(entries: ["a", "b"], total: 7) && snapshot.handledThrough == 5)
            }
        }
    }

    /// A batch pushed again to another instance has its refusals reported again, and an action that differs from
    /// the one handled under its number is a conflict there too; a hole in the numbers is one everywhere.
    @Test func refusalsAndConflictsAreTheSameOnEveryInstance() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            let batch: [(Int64, TrackerAction)] = [(1, .add("a")), (2, .forbidden), (3, .impossible)]
            let first = try await a.running.push(batch).decoded(PushAnswer.self)
            #expect(first.refused.map(\.seq) == [2, 3] && first.handledThrough == 3 && first.cursor == 1)
            #expect(first.refused.first?.reason == "forbidden here")
            let again = try await b.running.push(batch).decoded(PushAnswer.self)
            #expect(again == first)
            let differing = try await b.running.push([(1, .add("another")), (2, .forbidden), (3, .impossible), (4, .count(1))])
            #expect(differing.status == 409)
            #expect(try differing.decoded(ErrorAnswer.self).handledThrough == 3)
            let hole = try await a.running.push([(9, .count(1))])
            #expect(hole.status == 409)
            let other = try await b.running.push([(1, .count(1))], token: Fixture.secondWriter)
            #expect(other.status == 403, "a client's name belongs to the token it first pushed with, on every instance")
            for instance in instances {
                #expect(try await instance.running.snapshot().state == Tracker(entries: ["a"]))
            }
            let clients = try a.server.clients(of: "tracker")
            #expect(clients.map(\.name) == ["client-a"] && clients.first?.handledThrough == 3)
            #expect(try b.server.clients(of: "tracker").map(\.handledThrough) == [3])
        }
    }

    /// A client that followed one instance resumes on another with the last cursor it saw: that instance sends
    /// only the changes after it, however many instances made them.
    @Test func aFeedResumedOnAnotherInstanceMissesNothingAndRepeatsNothing() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            _ = try await a.running.push([(1, .count(1)), (2, .count(1))])
            #expect(try await eventuallyAsync { try await b.running.snapshot().cursor == 2 })
            var events = SyncConnection(server: b.running.url, store: "tracker", token: Fixture.writer)
                .feed(client: "client-a", after: 2).makeAsyncIterator()
            #expect(await eventually { b.server.followerCounts["tracker"] == 1 })
            _ = try await a.running.push([(3, .count(10))])
            let change = try #require(try await nextEvent(&events))
            #expect(change.name == "change" && change.id == "3")
            let decoded = try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(change.data.utf8))
            #expect(decoded.state.total == 12)
            #expect(decoded.handledThrough == 3, "the pushing client's own feed learns its number on any instance")
        }
    }

    /// An instance started after others took pushes answers 503 until it has applied the log, then serves the
    /// same state, cursor and clients' numbers as they do.
    @Test func anInstanceStartedLaterCatchesUpBeforeItServes() async throws {
        try await withInstances(1) { cluster, instances in
            let a = instances[0]
            for seq in Int64(1)...150 {
                #expect(try await a.running.push([(seq, .count(1))]).status == 200)
            }
            try await withInstance(on: cluster, log: instances[0].log, waitsUntilServing: false) { late in
                #expect(await eventually { late.replications.allSatisfy(\.isServing) })
                let snapshot = try await late.running.snapshot()
                #expect(snapshot.cursor == 150 && snapshot.state.total == 150 && snapshot.handledThrough == 150)
                let replayed = try await late.running.push([(150, .count(1)), (151, .count(2))]).decoded(PushAnswer.self)
                #expect(replayed == PushAnswer(handledThrough: 151, refused: [], cursor: 151))
                #expect(try await eventuallyAsync { try await a.running.snapshot().state.total == 152 })
            }
        }
    }

    /// A store whose replication does not run answers 503: it may be behind what clients saw elsewhere.
    @Test func anInstanceThatDoesNotFollowItsLogAnswers503() async throws {
        try await withCluster { cluster in
            let client = PostgresClient(configuration: cluster.clientConfiguration)
            let server = SyncServer(storage: try .inMemory(), tokens: try Fixture.tokens())
            _ = try server.host(
                store: "tracker", replicatedOn: client, log: "idle_log", initialState: Tracker(), reducer: serverReducer
            )
            try await withRunningServer(server) { running in
                let answer = try await running.push([(1, .count(1))])
                #expect(answer.status == 503)
                #expect(try await running.request("GET", "stores/tracker?client=a").status == 503)
            }
        }
    }

    /// Clients of both instances dispatching at once all end with one state, which holds every action once, each
    /// client's in the order it dispatched them.
    @Test func clientsOfTwoInstancesDispatchingAtOnceConverge() async throws {
        try await withInstances(2) { cluster, instances in
            let clients = try (0..<4).map { try synced(instances[$0 % 2].running.url) }
            await withTaskGroup(of: Void.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        for action in 0..<40 { client.store.dispatch(.add("\(index)-\(action)")) }
                    }
                }
            }
            #expect(await eventually {
                clients.allSatisfy { $0.status == .synced && $0.store.state.entries.count == 160 }
            })
            let states = clients.map(\.store.state)
            #expect(states.allSatisfy { $0 == states[0] })
            for index in 0..<4 {
                #expect(states[0].entries.filter { $0.hasPrefix("\(index)-") } == (0..<40).map { "\(index)-\($0)" })
            }
            for instance in instances {
                #expect(try await instance.running.snapshot().state == states[0])
            }
        }
    }

    /// Two instance processes on one log: an app pushes 300 actions to the first, which is killed (SIGKILL) at a
    /// random moment mid-push and started again on its port. The app ends synced, and an app following the second
    /// instance ends with every action once, in order.
    @Test(arguments: 0..<2)
    func anInstanceKilledMidPushLosesNothingAndAnotherServesEveryAction(round: Int) async throws {
        try await withCluster { cluster in
            let log = "killed_\(UUID().uuidString.prefix(8).lowercased())"
            let port = try await withRunningServer(try Fixture.server()) { $0.port }
            var first = try await startInstanceProcess(cluster, log: log, port: port)
            let second = try await startInstanceProcess(cluster, log: log, port: 0)
            let pusher = try synced(URL(string: "http://127.0.0.1:\(port)/")!)
            let follower = try synced(URL(string: "http://127.0.0.1:\(second.port)/")!)
            for index in 0..<300 { pusher.store.dispatch(.add(String(index))) }
            #expect(await eventually { pusher.pendingCount < 300 })
            usleep(UInt32.random(in: 0...20_000))  // a random instant to kill it at, not a wait for a signal
            first.process.kill()
            _ = await first.process.exitStatus()
            first = try await startInstanceProcess(cluster, log: log, port: port)
            pusher.syncNow()
            let expected = (0..<300).map(String.init)
            #expect(await eventually { pusher.status == .synced && follower.store.state.entries.count >= 300 })
            #expect(pusher.store.state.entries == expected)
            #expect(follower.store.state.entries == expected)
            first.process.kill()
            second.process.kill()
        }
    }

    /// A container written on one instance is read on another with the same version; a write naming a version
    /// another instance replaced meets 412 there, with the current version's `ETag`.
    @Test func aContainerWrittenOnOneInstanceIsReadOnAnotherWithItsVersion() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            let dark = try JSONEncoder().encode(Settings(theme: "dark"))
            let large = try JSONEncoder().encode(Settings(fontSize: 20))
            let created = try await put(a.running, dark, ["If-None-Match": "*"])
            #expect(created.status == 204 && created.headers["etag"] == "\"1\"")
            #expect(try await eventuallyAsync { try await b.running.request("GET", "containers/settings").status == 200 })
            let read = try await b.running.request("GET", "containers/settings")
            #expect(read.body == dark && read.headers["etag"] == "\"1\"")
            #expect(try await put(b.running, large, ["If-Match": "\"1\""]).status == 204)
            let stale = try await put(a.running, dark, ["If-Match": "\"1\""])
            #expect(stale.status == 412 && stale.headers["etag"] == "\"2\"")
            #expect(try await put(a.running, dark, ["If-None-Match": "*"]).status == 412)
            #expect(try await put(a.running, Data("{}".utf8), ["If-Match": "\"2\""]).status == 400)
        }
    }

    /// Writers on both instances, each reading, changing and writing on the version it read (again on a 412), lose
    /// no update: the checks see one order of versions, the log's.
    @Test func writersOnTwoInstancesLoseNoUpdate() async throws {
        try await withInstances(2) { cluster, instances in
            #expect(try await put(instances[0].running, try JSONEncoder().encode(Settings()), ["If-None-Match": "*"]).status == 204)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    let server = instances[writer % 2].running
                    group.addTask {
                        for _ in 0..<10 { try await increment(server) }
                    }
                }
                try await group.waitForAll()
            }
            for instance in instances {
                #expect(try await eventuallyAsync {
                    let read = try await instance.running.request("GET", "containers/settings")
                    return try read.decoded(Settings.self).fontSize == 52 && read.headers["etag"] == "\"41\""
                })
            }
        }
    }

    /// A container's feed on one instance sends the versions written on another, ids and all.
    @Test func aContainersFeedOnOneInstanceHearsWritesOnAnother() async throws {
        try await withInstances(2) { cluster, instances in
            let (a, b) = (instances[0], instances[1])
            let dark = try JSONEncoder().encode(Settings(theme: "dark"))
            var events = ContainerConnection(http: SyncHTTP(server: b.running.url, token: Fixture.writer))
                .feed("settings", after: 0).makeAsyncIterator()
            #expect(try await events.next() == .opened)
            #expect(await eventually { b.server.containerFollowerCounts["settings"] == 1 })
            #expect(try await put(a.running, dark, ["If-None-Match": "*"]).status == 204)
            let event = try #require(try await events.next())
            #expect(event.name == ContainerEvent.value && event.id == "1" && Data(event.data.utf8) == dark)
        }
    }

    @Test func anInvalidLogNameIsRefused() throws {
        let client = PostgresClient(configuration: PostgresClient.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none", tls: .disable
        ))
        let server = SyncServer(storage: try .inMemory(), tokens: try Fixture.tokens())
        #expect(throws: StorageError.self) {
            try server.host(
                store: "tracker", replicatedOn: client, log: "Not A Name", initialState: Tracker(), reducer: serverReducer
            )
        }
    }

    // MARK: Instances

    private func synced(_ server: URL) throws -> SyncedStore<Tracker, TrackerAction> {
        try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server, token: Fixture.writer,
            outbox: Fixture.temporaryFolder()
        )
    }

    private func put(_ server: RunningServer, _ body: Data, _ headers: [String: String]) async throws -> Exchange {
        try await server.request("PUT", "containers/settings", body: body, headers: headers)
    }

    /// Adds 1 to the settings' font size on `server`: reads, writes on the version read, and again on a 412.
    private func increment(_ server: RunningServer) async throws {
        while true {
            let read = try await server.request("GET", "containers/settings")
            var settings = try read.decoded(Settings.self)
            settings.fontSize += 1
            let written = try await put(server, try JSONEncoder().encode(settings), ["If-Match": read.headers["etag"] ?? ""])
            if written.status == 204 { return }
            try #require(written.status == 412, "\(written.status)")
        }
    }

    /// Starts an instance process on `log` (the server worker), on `port` (0: one the system chooses).
    private func startInstanceProcess(
        _ cluster: PostgresTestCluster, log: String, port: Int
    ) async throws -> (process: HelperProcess, port: Int) {
        let process = try HelperProcess("StatehouseSyncServerWorker", ["postgres:\(cluster.port):\(log)", String(port)])
        let listening = await process.line { $0.hasPrefix("listening ") }
        let chosen = try #require(listening.flatMap { Int($0.dropFirst("listening ".count)) }, "\(process.lines)")
        return (process, chosen)
    }

    private func nextEvent(
        _ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator
    ) async throws -> ServerSentEvent? {
        while let event = try await events.next() {
            if event != .opened { return event }
        }
        return nil
    }
}
