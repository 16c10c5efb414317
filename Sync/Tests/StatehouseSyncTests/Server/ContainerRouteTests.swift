import Foundation
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A hosted container is read with its version's `ETag`, and replaced or removed only by a write that names the
/// version it replaces: no client overwrites a value it never saw.
@Suite struct ContainerRouteTests {
    private let dark = try! JSONEncoder().encode(Settings(theme: "dark"))
    private let large = try! JSONEncoder().encode(Settings(fontSize: 20))

    private func put(_ server: RunningServer, _ body: Data, _ headers: [String: String], token: String = Fixture.writer) async throws -> Exchange {
        try await server.request("PUT", "containers/settings", token: token, body: body, headers: headers)
    }

    @Test func nothingStoredIs404WithTheVersionsETagAndAContainerNotHostedIs404WithNone() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let empty = try await server.request("GET", "containers/settings")
            #expect(empty.status == 404 && empty.headers["etag"] == "\"0\"")
        }
        let server = SyncServer(storage: try .inMemory(), tokens: try SyncTokens([.everything(name: "admin", token: Fixture.unknown)]))
        try await withRunningServer(server) { server async throws in
            let unhosted = try await server.request("GET", "containers/nothing-here", token: Fixture.unknown)
            #expect(unhosted.status == 404 && unhosted.headers["etag"] == nil)
        }
    }

    @Test func aWriteMustNameTheVersionItReplaces() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let unconditional = try await put(server, dark, [:])
            #expect(unconditional.status == 428)
            #expect(try unconditional.decoded(ErrorAnswer.self).error.contains("If-Match"))
            #expect(try await server.request("GET", "containers/settings").status == 404)

            let created = try await put(server, dark, ["If-None-Match": "*"])
            #expect(created.status == 204 && created.headers["etag"] == "\"1\"")
            let read = try await server.request("GET", "containers/settings")
            #expect(read.status == 200 && read.headers["etag"] == "\"1\"" && read.body == dark)

            let replaced = try await put(server, large, ["If-Match": "\"1\""])
            #expect(replaced.status == 204 && replaced.headers["etag"] == "\"2\"")
            for stale in [["If-Match": "\"1\""], ["If-None-Match": "*"], ["If-Match": "W/\"2\""], ["If-Match": "2"]] {
                let refused = try await put(server, dark, stale)
                #expect(refused.status == 412, "\(stale)")
                #expect(refused.headers["etag"] == "\"2\"")
            }
            #expect(try await put(server, dark, ["If-Match": "\"7\", \"2\""]).status == 204)
            #expect(try await put(server, large, ["If-Match": "*"]).status == 204)
            let last = try await server.request("GET", "containers/settings")
            #expect(last.body == large && last.headers["etag"] == "\"4\"")
        }
    }

    /// `"01"` and `"+1"` are not the entity tag `"1"` the server gave: a strong comparison is byte for byte.
    @Test func anIfMatchIsComparedAsTheETagsExactBytes() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            for tag in ["\"01\"", "\"+1\"", "\"0001\"", "\" 1\""] {
                let answer = try await put(server, large, ["If-Match": tag])
                #expect(answer.status == 412, "If-Match: \(tag) was taken for \"1\"")
            }
            #expect(try await server.request("GET", "containers/settings").body == dark)
        }
    }

    /// An `If-None-Match` that lists versions names none the write replaces: alone, it replaces nothing (428).
    @Test func anIfNoneMatchOfAnotherVersionIsNoCondition() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            let blind = try await put(server, large, ["If-None-Match": "\"999\""])
            #expect(blind.status == 428)
            #expect(try await server.request("GET", "containers/settings").body == dark)
            #expect(try await put(server, large, ["If-Match": "\"1\"", "If-None-Match": "\"999\""]).status == 204)
        }
    }

    /// A version names one value for good: a value removed and stored again is a new version, which an `If-Match`
    /// of the old one never matches.
    @Test func aRemovalIsAVersionToo() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            #expect(try await server.request("DELETE", "containers/settings", headers: ["If-Match": "\"5\""]).status == 412)
            let removed = try await server.request("DELETE", "containers/settings", headers: ["If-Match": "\"1\""])
            #expect(removed.status == 204 && removed.headers["etag"] == "\"2\"")
            let gone = try await server.request("GET", "containers/settings")
            #expect(gone.status == 404 && gone.headers["etag"] == "\"2\"")
            #expect(try await put(server, large, ["If-Match": "\"1\""]).status == 412)
            #expect(try await put(server, large, ["If-Match": "*"]).status == 412)
            #expect(try await put(server, large, ["If-None-Match": "*"]).headers["etag"] == "\"3\"")
        }
    }

    @Test func aBodyThatIsNotTheContainersTypeIs400AndChangesNothing() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            for body in [Data("{\"theme\": 3}".utf8), Data("not json".utf8), Data()] {
                let refused = try await put(server, body, ["If-None-Match": "*"])
                #expect(refused.status == 400, "\(String(decoding: body, as: UTF8.self))")
                #expect(try refused.decoded(ErrorAnswer.self).error.contains("Settings"))
            }
            let empty = try await server.request("GET", "containers/settings")
            #expect(empty.status == 404 && empty.headers["etag"] == "\"0\"")
        }
    }

    @Test func aTokenReachesOnlyTheContainersItWasGranted() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"], token: Fixture.reader).status == 403)
            #expect(try await server.request("DELETE", "containers/settings", token: Fixture.reader, headers: ["If-Match": "*"]).status == 403)
            #expect(try await put(server, dark, ["If-None-Match": "*"], token: Fixture.other).status == 403)
            #expect(try await server.request("GET", "containers/settings", token: Fixture.other).status == 403)
            #expect(try await server.request("GET", "containers/settings/events", token: Fixture.other).status == 403)
            #expect(try await server.request("GET", "containers/settings", token: nil).status == 401)
            #expect(try await server.request("GET", "containers/settings", token: Fixture.unknown).status == 401)
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            #expect(try await server.request("GET", "containers/settings", token: Fixture.reader).body == dark)
        }
    }

    /// Many clients writing on the same version at once: exactly one replaces it, the others hear 412.
    @Test func ofWritesRacingOnOneVersionExactlyOneWins() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for size in 0..<24 {
                    let body = try JSONEncoder().encode(Settings(fontSize: size))
                    group.addTask { try await put(server, body, ["If-Match": "\"1\""]).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 204 }.count == 1)
            #expect(statuses.filter { $0 == 412 }.count == 23)
            #expect(try await server.request("GET", "containers/settings").headers["etag"] == "\"2\"")
        }
    }

    @Test func theValueAndItsVersionOutliveTheServer() async throws {
        let storage = try SyncServerStorage.sqlite(path: Fixture.temporaryFolder().appendingPathComponent("s.sqlite").path)
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            #expect(try await put(server, large, ["If-Match": "\"1\""]).status == 204)
        }
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            let read = try await server.request("GET", "containers/settings")
            #expect(read.body == large && read.headers["etag"] == "\"2\"")
            #expect(try await put(server, dark, ["If-Match": "\"1\""]).status == 412)
        }
    }

    /// The feed sends the value now (unless `Last-Event-ID` is its version), then the value after each write; its
    /// ids are the versions.
    @Test func theFeedSendsTheValueThenEachNewVersion() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            let connection = ContainerConnection(http: SyncHTTP(server: server.url, token: Fixture.writer))
            var events = connection.feed("settings", after: nil).makeAsyncIterator()
            #expect(try await events.next() == .opened)
            let first = try #require(try await events.next())
            #expect(first.name == ContainerEvent.value && first.id == "1" && Data(first.data.utf8) == dark)
            #expect(try await put(server, large, ["If-Match": "\"1\""]).status == 204)
            let second = try #require(try await events.next())
            #expect(second.name == ContainerEvent.value && second.id == "2" && Data(second.data.utf8) == large)
            #expect(try await server.request("DELETE", "containers/settings", headers: ["If-Match": "\"2\""]).status == 204)
            let removed = try #require(try await events.next())
            #expect(removed.name == ContainerEvent.removed && removed.id == "3")

            var resumed = connection.feed("settings", after: 3).makeAsyncIterator()
            #expect(try await resumed.next() == .opened)
            #expect(try await put(server, dark, ["If-None-Match": "*"]).status == 204)
            let next = try #require(try await resumed.next())
            #expect(next.id == "4" && Data(next.data.utf8) == dark)
        }
    }

    /// A value's JSON may span lines; its event still carries it whole, as one value.
    @Test func aValueWithLineBreaksReachesTheFeedWhole() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let pretty = Data("{\r\n  \"theme\": \"a\\nb\",\n  \"fontSize\": 3\n}".utf8)
            #expect(try await put(server, pretty, ["If-None-Match": "*"]).status == 204)
            let connection = ContainerConnection(http: SyncHTTP(server: server.url, token: Fixture.writer))
            var events = connection.feed("settings", after: nil).makeAsyncIterator()
            #expect(try await events.next() == .opened)
            let event = try #require(try await events.next())
            #expect(try JSONDecoder().decode(Settings.self, from: Data(event.data.utf8)) == Settings(theme: "a\nb", fontSize: 3))
        }
    }
}
