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

// MARK: - Windows between the log, the answers and the feeds

/// Not `Equatable`: a batch pushed again is checked by the bytes its actions encode to, and a `Set` encodes its
/// elements in an order that depends on the storage it sits in.
private enum Tagging: Codable, Sendable {
    case tag(Set<String>)
}

extension ReplicatedServerTests {
    /// A replication that ended and runs again must catch up again before it serves: meanwhile the other instances
    /// took pushes, and this one holds the state it had when it stopped.
    @Test func anInstanceWhoseReplicationRunsAgainAnswers503UntilItCaughtUpAgain() async throws {
        try await withCluster { cluster in
            let log = "again_\(UUID().uuidString.prefix(8).lowercased())"
            try await withInstance(on: cluster, log: log) { a in
                try await withControlledInstance(on: cluster, log: log) { server, replications in
                    let tracker = replications[0]
                    var run = Task { try? await tracker.run() }
                    #expect(await eventually { tracker.isServing })
                    run.cancel()
                    #expect(await eventually { !tracker.isServing })
                    for seq in Int64(1)...20 {
                        #expect(try await a.running.push([(seq, .count(1))]).status == 200)
                    }
                    // The log can no longer be read: this instance cannot catch up with those 20 pushes.
                    cluster.stop()
                    run = Task { try? await tracker.run() }
                    defer { run.cancel() }
                    // Time for what must not happen to show: nothing signals that it did not.
                    try await Task.sleep(for: .seconds(1))
                    let held = try server.clients(of: "tracker").first?.handledThrough ?? 0
                    #expect(!tracker.isServing, "serving, holding client-a's actions through \(held) of 20")
                    try await withRunningServer(server) { b in
                        let read = try await b.request("GET", "stores/tracker?client=client-a")
                        #expect(read.status == 503, "\(read.status): \(String(decoding: read.body, as: UTF8.self))")
                    }
                }
            }
        }
    }

    /// Once an instance answered a push, a read on that same instance shows it, as on one server (which publishes
    /// before it answers): the answer's cursor, and the client's number.
    @Test func aPushIsReadAtOnceOnTheInstanceThatAnsweredIt() async throws {
        try await withInstances(1) { cluster, instances in
            let a = instances[0].running
            // A large state takes a while to encode for the feeds: the answer must not go out before that.
            let line = String(repeating: "x", count: 1_000)
            for batch in Int64(0)..<3 {
                let actions = (1...1_000).map { (batch * 1_000 + Int64($0), TrackerAction.add(line)) }
                #expect(try await a.push(actions).status == 200)
            }
            var stale: [String] = []
            for seq in Int64(3_001)...3_020 {
                let answer = try await a.push([(seq, .count(1))]).decoded(PushAnswer.self)
                let read = try await a.snapshot()
                if read.cursor < answer.cursor || read.handledThrough < answer.handledThrough {
                    stale.append("answered cursor \(answer.cursor), then read \(read.cursor) (handled \(read.handledThrough))")
                }
            }
            #expect(stale.isEmpty, "\(stale)")
        }
    }

    /// Every instance must decide alike on a batch pushed again, whatever its actions' type: one that applies the
    /// batch's new action while another refuses the batch (409) holds another state from then on.
    @Test func instancesDecideAlikeOnABatchPushedAgainWhoseActionsAreNotEquatable() async throws {
        try await withCluster { cluster in
            let log = "tags_\(UUID().uuidString.prefix(8).lowercased())"
            func withTaggingInstance<T>(_ body: (Instance) async throws -> T) async throws -> T {
                try await withInstance(on: cluster, log: log, hosting: { server, client in
                    [try server.host(store: "notes", replicatedOn: client, log: log, initialState: Tracker()) {
                        (state: inout Tracker, action: Tagging) in
                        switch action {
                        case .tag(let tags): state.entries += tags.sorted()
                        }
                    }]
                }, body)
            }
            func push(_ server: RunningServer, client: String, _ actions: [(seq: Int, tags: [String])]) async throws -> Int {
                let body = try JSONSerialization.data(withJSONObject: [
                    "client": client,
                    "actions": actions.map { ["seq": $0.seq, "action": ["tag": ["_0": $0.tags]]] },
                ])
                return try await server.request("POST", "stores/notes/actions", body: body).status
            }
            try await withTaggingInstance { first in
                try await withTaggingInstance { second in
                    let (a, onA, b) = (first.server, first.running, second.server)
                    var answers: [Int] = []
                    for round in 0..<20 {
                        let client = "tagger-\(round)"
                        _ = try await push(onA, client: client, [(1, ["a", "b"])])
                        // The answer to the first was lost: the app pushes it again, with its next action.
                        answers.append(try await push(onA, client: client, [(1, ["a", "b"]), (2, ["c", "d"])]))
                    }
                    // Applied after every push above on each instance: once B has it, B applied them all.
                    #expect(try await push(onA, client: "marker", [(1, ["z"])]) == 200)
                    #expect(await eventually { (try? b.clients(of: "notes"))?.contains { $0.name == "marker" } == true })
                    func numbers(_ server: SyncServer) throws -> [String: Int64] {
                        Dictionary(uniqueKeysWithValues: try server.clients(of: "notes").map { ($0.name, $0.handledThrough) })
                    }
                    let (onAInstance, onBInstance) = (try numbers(a), try numbers(b))
                    let differing = onAInstance.keys.filter { onAInstance[$0] != onBInstance[$0] }.sorted()
                    #expect(differing.isEmpty, "the instances hold other numbers for \(differing); A answered \(answers)")
                }
            }
        }
    }

    /// A push taken while the replication runs, and still waiting for the log when the replication stops, is
    /// answered (503: push it again) rather than held for as long as the replication does not run.
    @Test func aPushWaitingWhenTheReplicationStopsIsAnswered() async throws {
        try await withCluster { cluster in
            let log = "stopping_\(UUID().uuidString.prefix(8).lowercased())"
            try await withControlledInstance(on: cluster, log: log) { server, replications in
                let tracker = replications[0]
                var run = Task { try? await tracker.run() }
                #expect(await eventually { tracker.isServing })
                try await withRunningServer(server) { b in
                    // Another session holds the log's head: the push's append waits on the server.
                    let locker = PostgresClient(configuration: cluster.clientConfiguration)
                    let locking = Task(executorPreference: PostgresStorage.executor) { await locker.run() }
                    defer { locking.cancel() }
                    let holding = Recorder<Void>()
                    let release = AsyncStream<Void>.makeStream()
                    let holder = Task(executorPreference: PostgresStorage.executor) {
                        try await locker.withConnection { connection in
                            try await connection.query("BEGIN", logger: connection.logger)
                            try await connection.query("SELECT sequence FROM \(unescaped: log)_head FOR UPDATE", logger: connection.logger)
                            holding.append(())
                            for await _ in release.stream { break }
                            try await connection.query("COMMIT", logger: connection.logger)
                        }
                    }
                    #expect(await eventually { holding.count == 1 })
                    let answered = Recorder<Int>()
                    let pushing = Task { answered.append((try? await b.push([(1, .count(1))]).status) ?? -1) }
                    defer { pushing.cancel() }
                    // Time for an early answer, which must not come, to show.
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(answered.count == 0, "the push waits for the log")
                    run.cancel()
                    release.continuation.yield()
                    try await holder.value
                    #expect(await eventually { !tracker.isServing })
                    #expect(
                        await eventually(timeout: .seconds(10)) { answered.count == 1 },
                        "the replication stopped; the push is still waiting"
                    )
                    #expect(answered.elements.first.map { $0 == 503 || $0 == 200 } ?? true)
                    // Lets a push that still waits end, so that the server can stop.
                    run = Task { try? await tracker.run() }
                    #expect(await eventually { answered.count == 1 })
                    run.cancel()
                }
            }
        }
    }

    /// An instance whose replication stopped answers new requests 503, and must not keep its open feeds silent: a
    /// client following it would never hear a push to another instance. Cut off, it reconnects (elsewhere).
    @Test func aFeedOnAnInstanceWhoseReplicationStopsEndsOrHearsOtherInstancesPushes() async throws {
        try await withCluster { cluster in
            let log = "silent_\(UUID().uuidString.prefix(8).lowercased())"
            try await withInstance(on: cluster, log: log) { a in
                try await withControlledInstance(on: cluster, log: log) { server, replications in
                    let tracker = replications[0]
                    let run = Task { try? await tracker.run() }
                    defer { run.cancel() }
                    #expect(await eventually { tracker.isServing })
                    try await withRunningServer(server) { b async throws in
                        let heard = Recorder<String>()
                        let reading = Task {
                            do {
                                let feed = SyncConnection(server: b.url, store: "tracker", token: Fixture.writer)
                                    .feed(client: "client-b", after: nil)
                                for try await event in feed where event != .opened { heard.append(event.name) }
                            } catch {}
                            heard.append("ended")
                        }
                        defer { reading.cancel() }
                        #expect(await eventually { heard.elements == ["snapshot"] })
                        run.cancel()
                        #expect(await eventually { !tracker.isServing })
                        #expect(try await a.running.push([(1, .count(1))]).status == 200)
                        #expect(
                            await eventually(timeout: .seconds(10)) { heard.count > 1 },
                            "the feed stays open and silent: \(heard.elements)"
                        )
                    }
                }
            }
        }
    }

    /// A client that saw a cursor on one instance resumes its feed on another that has not applied it yet: that
    /// instance must not send it an older state, and then again the change it had.
    @Test func aFeedResumedOnAnInstanceBehindTheCursorSendsNothingOlder() async throws {
        try await withCluster { cluster in
            let log = "behind_\(UUID().uuidString.prefix(8).lowercased())"
            try await withInstance(on: cluster, log: log) { a in
                // Instance B applies `.count(7)` slowly (the same result: deterministic), so it is behind for a while.
                try await withInstance(on: cluster, log: log, hosting: { server, client in
                    [try server.host(store: "tracker", replicatedOn: client, log: log, initialState: Tracker()) {
                        (state: inout Tracker, action: TrackerAction) in
                        if action == .count(7) { usleep(500_000) }
                        try serverReducer(&state, action)
                    }]
                }) { instance in
                    let b = instance.running
                    let answer = try await a.running.push([(1, .count(7))]).decoded(PushAnswer.self)
                    #expect(answer.cursor == 1)
                    // A change after it, so that a feed that sends nothing older has something to send.
                    #expect(try await a.running.push([(2, .count(1))]).status == 200)
                    var events = SyncConnection(server: b.url, store: "tracker", token: Fixture.writer)
                        .feed(client: "client-a", after: answer.cursor).makeAsyncIterator()
                    // Refused (503) until B caught up would do too: it sends nothing older.
                    if let first = try? await nextEvent(&events) {
                        #expect(
                            (first.id.flatMap { Int64($0) } ?? 0) > answer.cursor,
                            "resumed after \(answer.cursor), sent \(first.name) \(first.id ?? "")"
                        )
                    }
                }
            }
        }
    }

    /// One instance whose replications the test runs and stops itself; its PostgreSQL client runs throughout.
    private func withControlledInstance<T>(
        on cluster: PostgresTestCluster, log: String, _ body: (SyncServer, [SyncReplication]) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: cluster.clientConfiguration)
        let (server, replications) = try Fixture.replicatedServer(client: client, log: log)
        let connecting = Task(executorPreference: PostgresStorage.executor) { await client.run() }
        defer { connecting.cancel() }
        return try await body(server, replications)
    }
}
