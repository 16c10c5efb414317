import Foundation
import GRDB
@testable import StatehouseServer
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// Pushes that come while a commit runs are committed together in the next one: each still applied once, in its
/// client's order, and a commit that fails fails every push of its group and changes nothing.
@Suite struct GroupCommitTests {
    @Test func manyClientsPushingAtOnceHaveEveryActionAppliedOnceInTheirOrder() async throws {
        let folder = Fixture.temporaryFolder()
        let storage = try SyncServerStorage.sqlite(path: folder.appendingPathComponent("s.sqlite").path)
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<16 {
                    group.addTask {
                        for seq in Int64(1)...25 {
                            let answer = try await server.push(client: "c\(client)", [(seq, .add("c\(client).\(seq)"))])
                            #expect(answer.status == 200)
                            #expect(try answer.decoded(PushAnswer.self).handledThrough == seq)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let snapshot = try await server.snapshot()
            #expect(snapshot.cursor == 400 && snapshot.state.entries.count == 400)
            for client in 0..<16 {
                let mine = snapshot.state.entries.filter { $0.hasPrefix("c\(client).") }
                #expect(mine == (1...25).map { "c\(client).\($0)" })
            }
        }
        // What the server committed is what it answered: a server started again on it holds the same.
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            #expect(try await server.snapshot().cursor == 400)
        }
    }

    /// A batch pushed twice while a commit waits (its first answer lost, say) lands twice in the next group: the
    /// second copy is checked against what the first one committed, so its refusals are reported again and an action
    /// that differs is refused (409), rather than skipped as handled.
    @Test func aBatchPushedTwiceIntoOneGroupIsCheckedAgainstTheFirst() async throws {
        let syncServer = try Fixture.server()
        guard case .hosted(let hosted) = syncServer.hosting(store: "tracker"),
            let store = hosted as? HostedStore<Tracker, TrackerAction>
        else { throw HostedStoreMissing() }
        try await withRunningServer(syncServer) { server async throws in
            // The pushes' queue is held, as by a commit that waits for the disk: both copies wait for one group.
            let release = DispatchSemaphore(value: 0)
            store.pushes.async { release.wait() }
            async let first = server.push(client: "c", [(1, .forbidden), (2, .add("first"))])
            #expect(await eventually { store.waitingPushes.count == 1 })
            async let second = server.push(client: "c", [(1, .forbidden), (2, .add("another"))])
            #expect(await eventually { store.waitingPushes.count == 2 })
            release.signal()

            let firstAnswer = try await first
            #expect(firstAnswer.status == 200)
            #expect(try firstAnswer.decoded(PushAnswer.self).refused.map(\.seq) == [1])
            let secondAnswer = try await second
            #expect(secondAnswer.status == 409)
            #expect(try secondAnswer.decoded(ErrorAnswer.self).handledThrough == 2)
            #expect(try await server.snapshot(client: "c").state.entries == ["first"])
            // The same batch again, unchanged: its refusal is reported again.
            let again = try await server.push(client: "c", [(1, .forbidden), (2, .add("first"))])
            #expect(try again.decoded(PushAnswer.self).refused.map(\.seq) == [1])
        }
    }

    private struct HostedStoreMissing: Error {}

    /// A commit that fails (the disk, say) answers 503 to each push of its group, and the live state stays the
    /// committed one: the pushes apply once the storage works again, and nothing twice.
    @Test func aFailedCommitChangesNothing() async throws {
        let storage = try SyncServerStorage.inMemory()
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            #expect(try await server.push(client: "a", [(1, .add("a1"))]).status == 200)
            try await storage.database.write { db in
                try db.execute(sql: """
                    CREATE TRIGGER failing BEFORE INSERT ON syncAction BEGIN SELECT RAISE(ABORT, 'disk full'); END
                    """)
            }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for client in ["a", "b", "c"] {
                    group.addTask {
                        let seq: Int64 = client == "a" ? 2 : 1
                        return try await server.push(client: client, [(seq, .add("\(client)\(seq)"))]).status
                    }
                }
                for try await status in group { #expect(status == 503) }
            }
            let during = try await server.snapshot(client: "a")
            #expect(during.state.entries == ["a1"] && during.cursor == 1 && during.handledThrough == 1)
            try await storage.database.write { try $0.execute(sql: "DROP TRIGGER failing") }
            #expect(try await server.push(client: "a", [(2, .add("a2"))]).status == 200)
            #expect(try await server.push(client: "b", [(1, .add("b1"))]).status == 200)
            #expect(try await server.snapshot().state.entries == ["a1", "a2", "b1"])
        }
    }
}
