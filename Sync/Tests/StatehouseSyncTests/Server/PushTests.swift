import Foundation
import StatehouseServer
import StatehouseSyncWire
import SyncFixtures
import Testing

/// A pushed action is applied once, in its client's order; a batch the server cannot take whole changes nothing.
@Suite struct PushTests {
    @Test func aBatchPushedTwiceIsAppliedOnce() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let batch: [(Int64, TrackerAction)] = [(1, .add("a")), (2, .count(5)), (3, .add("b"))]
            let first = try await server.push(batch)
            let again = try await server.push(batch)
            #expect(first.status == 200 && again.status == 200)
            let answer = try again.decoded(PushAnswer.self)
            #expect(answer == PushAnswer(handledThrough: 3, refused: [], cursor: 3))
            let snapshot = try await server.snapshot()
            #expect(snapshot.state == Tracker(entries: ["a", "b"], total: 5))
            #expect(snapshot.handledThrough == 3 && snapshot.cursor == 3)
        }
    }

    /// A batch that overlaps what was handled applies only its new actions: the answer to the first was lost.
    @Test func aBatchOverlappingHandledActionsAppliesOnlyTheNewOnes() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            _ = try await server.push([(1, .count(1)), (2, .count(2))])
            let answer = try await server.push([(2, .count(2)), (3, .count(3))]).decoded(PushAnswer.self)
            #expect(answer.handledThrough == 3)
            #expect(try await server.snapshot().state.total == 6)
        }
    }

    /// A `Set` in an action encodes its elements in an order that changes from one process to the next: the same
    /// action pushed again (by an app restarted, to a server restarted) comes in other bytes, and is still the same
    /// action. Only another value is a conflict.
    @Test func anActionPushedAgainInAnotherEncodingOfTheSameValueIsNoConflict() async throws {
        let storage = try SyncServerStorage.sqlite(path: Fixture.temporaryFolder().appendingPathComponent("s.sqlite").path)
        let entries = (0..<40).map { "entry \($0)" }
        func push(_ server: RunningServer, _ batch: [(seq: Int64, entries: [String])]) async throws -> Exchange {
            let actions: [[String: Any]] = batch.map { ["seq": $0.seq, "action": ["addAll": ["_0": $0.entries]]] }
            let body = try JSONSerialization.data(withJSONObject: ["client": "client-a", "actions": actions])
            return try await server.request("POST", "stores/tracker/actions", body: body)
        }
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            #expect(try await push(server, [(1, entries)]).status == 200)
        }
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            let again = try await push(server, [(1, entries.reversed()), (2, ["next"])])
            #expect(again.status == 200, "\(String(decoding: again.body, as: UTF8.self))")
            #expect(try again.decoded(PushAnswer.self).handledThrough == 2)
            #expect(try await push(server, [(1, Array(entries.dropLast())), (2, ["next"])]).status == 409)
            #expect(try await server.snapshot().state.entries == entries.sorted() + ["next"])
        }
    }

    /// An action pushed again must be the one handled under its number (an outbox restored from an older copy, or
    /// two apps sharing a client name, give a number to another action): skipped as a replay, it would be lost.
    @Test func anActionPushedAgainWithOtherContentIsAConflictAndChangesNothing() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            _ = try await server.push([(1, .add("a")), (2, .forbidden)])
            for differs in [[(1, .add("a")), (2, .add("b")), (3, .add("c"))], [(1, .add("z"))]] as [[(Int64, TrackerAction)]] {
                let answer = try await server.push(differs)
                #expect(answer.status == 409)
                #expect(try answer.decoded(ErrorAnswer.self).handledThrough == 2)
            }
            #expect(try await server.snapshot().state.entries == ["a"])
            let same = try await server.push([(1, .add("a")), (2, .forbidden), (3, .add("c"))])
            #expect(try same.decoded(PushAnswer.self) == PushAnswer(
                handledThrough: 3, refused: [Refusal(seq: 2, reason: "forbidden here")], cursor: 2
            ))
        }
    }

    @Test func aBatchStartingPastTheNextExpectedActionIsRefusedWhole() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            _ = try await server.push([(1, .count(1))])
            let gap = try await server.push([(3, .count(3)), (4, .count(4))])
            #expect(gap.status == 409)
            #expect(try gap.decoded(ErrorAnswer.self).handledThrough == 1)
            #expect(try await server.snapshot().state.total == 1)
        }
    }

    @Test(arguments: [
        #"{"client": "client-a", "actions": [{"seq": 1, "action": {"add": {"_0": "a"}}}, {"seq": 3, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "client-a", "actions": [{"seq": 2, "action": {"count": {"_0": 1}}}, {"seq": 1, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "client-a", "actions": [{"seq": 0, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "client-a", "actions": [{"seq": 9223372036854775807, "action": {"count": {"_0": 1}}}, {"seq": 1, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "client-a", "actions": [{"seq": 9223372036854775806, "action": {"count": {"_0": 1}}}, {"seq": 9223372036854775807, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "client-a", "actions": [{"seq": 1, "action": {"count": {"_0": 1}}}, {"seq": 2, "action": {"fly": {}}}]}"#,
        #"{"client": "client/a", "actions": [{"seq": 1, "action": {"count": {"_0": 1}}}]}"#,
        #"{"client": "", "actions": []}"#,
        #"{"actions": [{"seq": 1, "action": {"count": {"_0": 1}}}]}"#,
        #"not json"#,
    ])
    func aMalformedBatchIsABadRequestAndChangesNothing(body: String) async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let answer = try await server.request("POST", "stores/tracker/actions", body: Data(body.utf8))
            #expect(answer.status == 400)
            #expect(try !answer.decoded(ErrorAnswer.self).error.isEmpty)
            let snapshot = try await server.snapshot()
            #expect(snapshot.state == Tracker() && snapshot.cursor == 0 && snapshot.handledThrough == 0)
        }
    }

    @Test func anOversizedBodyOrBatchIsRefusedAndChangesNothing() async throws {
        let server = try Fixture.server(limits: SyncLimits(maximumBody: 2_000, maximumBatch: 10))
        try await withRunningServer(server) { server async throws in
            let tooMany = try await server.push((1...11).map { (Int64($0), TrackerAction.count(1)) })
            #expect(tooMany.status == 413)
            let tooLarge = try await server.push([(1, .add(String(repeating: "x", count: 5_000)))])
            #expect(tooLarge.status == 413)
            #expect(try await server.snapshot().cursor == 0)
        }
    }

    /// The server keeps a sequence number per client name: past its limit a new name is refused, known ones go on.
    @Test func aNewClientPastTheLimitIsRefusedAndKnownOnesGoOn() async throws {
        try await withRunningServer(try Fixture.server(limits: SyncLimits(maximumClients: 2))) { server async throws in
            #expect(try await server.push(client: "one", [(1, .count(1))]).status == 200)
            #expect(try await server.push(client: "two", [(1, .count(1))]).status == 200)
            let third = try await server.push(client: "three", [(1, .count(1))])
            #expect(third.status == 429)
            #expect(try third.decoded(ErrorAnswer.self).error.contains("2 clients"))
            #expect(try await server.push(client: "one", [(2, .count(1))]).status == 200)
            #expect(try await server.snapshot().state.total == 3)
        }
    }

    /// Refused actions are handled (the client drops them) but not applied, and a batch pushed again reports them
    /// again; a reducer that throws halfway leaves nothing of its work behind.
    @Test func refusedActionsAreHandledNotAppliedAndReportedAgain() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let batch: [(Int64, TrackerAction)] = [(1, .add("a")), (2, .forbidden), (3, .impossible), (4, .add("b"))]
            let answer = try await server.push(batch).decoded(PushAnswer.self)
            #expect(answer.handledThrough == 4 && answer.cursor == 2)
            #expect(answer.refused.map(\.seq) == [2, 3])
            #expect(answer.refused[0].reason == "forbidden here")
            #expect(answer.refused[1].reason.contains("impossible"))
            let again = try await server.push(batch).decoded(PushAnswer.self)
            #expect(again == answer)
            #expect(try await server.snapshot().state == Tracker(entries: ["a", "b"]))
        }
    }

    /// Each client's actions are numbered on their own; many clients pushing at once all get applied, once each.
    @Test func manyClientsPushingAtOnceAreEachAppliedOnce() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        for seq in Int64(1)...25 {
                            // Every batch is sent twice: the second is a replay and must change nothing.
                            for _ in 0..<2 {
                                let answer = try await server.push(client: "client-\(client)", [(seq, .count(1))])
                                #expect(answer.status == 200)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let snapshot = try await server.snapshot()
            #expect(snapshot.state.total == 200 && snapshot.cursor == 200)
        }
    }

    /// The server's state and every client's sequence numbers survive a restart: a batch pushed again after it is
    /// still applied once.
    @Test func aRestartedServerKeepsTheStateAndTheSequenceNumbers() async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("sync.sqlite").path
        try await withRunningServer(try Fixture.server(storage: .sqlite(path: path))) { server async throws in
            _ = try await server.push([(1, .count(1)), (2, .count(2))])
        }
        try await withRunningServer(try Fixture.server(storage: .sqlite(path: path))) { server async throws in
            let answer = try await server.push([(1, .count(1)), (2, .count(2)), (3, .count(3))]).decoded(PushAnswer.self)
            #expect(answer.handledThrough == 3 && answer.cursor == 3)
            #expect(try await server.snapshot().state.total == 6)
        }
    }
}
