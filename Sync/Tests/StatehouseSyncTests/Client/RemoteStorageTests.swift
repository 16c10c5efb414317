import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A container on a `RemoteStorage` works at once and offline, follows the server's value, and meets another app's
/// newer value as its conflict policy says; an `update` online is a transaction on the server's value.
@Suite struct RemoteStorageTests {
    private func remote(
        _ url: URL, cache: URL = Fixture.temporaryFolder(), token: String = Fixture.writer,
        conflicts: ConflictPolicy = .rerunUpdate
    ) throws -> RemoteStorage {
        try RemoteStorage(server: url, token: token, cache: cache, conflicts: conflicts)
    }

    private func settings(_ storage: RemoteStorage) -> StateContainer<Settings> {
        StateContainer(Settings(), key: "settings", storage: storage)
    }

    private func stored(_ server: RunningServer) async throws -> Settings? {
        let read = try await server.request("GET", "containers/settings")
        return read.status == 200 ? try read.decoded(Settings.self) : nil
    }

    /// A server on a port that is free again: the tests that start offline start it later on the same port.
    private func stoppedServer(_ storage: SyncServerStorage) async throws -> (port: Int, url: URL) {
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        return (port, URL(string: "http://127.0.0.1:\(port)/")!)
    }

    @Test func aWriteReachesTheServerAndAnotherAppsListeners() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let alice = try remote(server.url)
            let bob = try remote(server.url)
            let aliceSettings = settings(alice)
            let bobSettings = settings(bob)
            let heard = Recorder<Settings>()
            let token = bobSettings.observe { heard.append($0) }
            aliceSettings.modify(Settings(theme: "dark"))
            #expect(await eventually { bobSettings.value == Settings(theme: "dark") })
            #expect(await eventually { heard.elements.last == Settings(theme: "dark") })
            #expect(try await stored(server) == Settings(theme: "dark"))
            #expect(await eventually { alice.status == .synced })
            withExtendedLifetime(token) {}
        }
    }

    @Test func offlineAWriteWorksLocallyAndIsPushedOnceTheServerIsBack() async throws {
        let storage = try SyncServerStorage.inMemory()
        let (port, url) = try await stoppedServer(storage)
        let remote = try remote(url)
        let container = settings(remote)
        container.modify(Settings(theme: "offline"))
        try container.flush()
        #expect(container.value == Settings(theme: "offline"))
        #expect(await eventually { if case .offline = remote.status { true } else { false } })
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            remote.syncNow()
            #expect(await eventually { remote.status == .synced })
            #expect(try await stored(server) == Settings(theme: "offline"))
        }
    }

    /// A write the cache accepted is the app's until the server holds it, across a restart: the next run pushes it
    /// once a container reads the key again.
    @Test func aWriteLeftByAnEarlierRunIsPushedByTheNext() async throws {
        let storage = try SyncServerStorage.inMemory()
        let (port, url) = try await stoppedServer(storage)
        let cache = Fixture.temporaryFolder()
        do {
            let container = settings(try remote(url, cache: cache))
            container.modify(Settings(theme: "before the restart"))
            try container.flush()
        }
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            let remote = try remote(url, cache: cache)
            let container = settings(remote)
            #expect(container.value == Settings(theme: "before the restart"))
            #expect(remote.status != .synced)
            #expect(await eventually { remote.status == .synced })
            #expect(try await stored(server) == Settings(theme: "before the restart"))
        }
    }

    /// Four apps each increment the same counter with `update`, at once: a transaction on the server's value, run
    /// again when another's write came first, loses none, and no app loses so many rounds in a row that its update
    /// gives up.
    @Test func updatesFromFourAppsAtOnceLoseNothing() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let apps = try (0..<4).map { _ in settings(try remote(server.url)) }
            await withTaskGroup(of: Void.self) { group in
                for app in apps {
                    group.addTask {
                        await offThePool {
                            for _ in 0..<25 { app.update { $0.fontSize += 1 } }
                        }
                    }
                }
            }
            #expect(try await stored(server)?.fontSize == 12 + 100)
            #expect(await eventually { apps.allSatisfy { $0.value.fontSize == 112 } })
        }
    }

    /// Two apps change different fields offline; with a merge, both changes end on the server and in both apps.
    @Test func aMergeKeepsBothAppsChanges() async throws {
        let merge = ConflictPolicy.merge(Settings.self) { base, local, remote in
            var merged = remote
            if local.theme != base?.theme { merged.theme = local.theme }
            if local.fontSize != base?.fontSize { merged.fontSize = local.fontSize }
            return merged
        }
        let (alice, bob) = try await twoAppsChangingOffline(conflicts: merge)
        #expect(alice == Settings(theme: "dark", fontSize: 20))
        #expect(bob == Settings(theme: "dark", fontSize: 20))
    }

    @Test func withServerWinsTheLaterPushIsDropped() async throws {
        let (alice, bob) = try await twoAppsChangingOffline(conflicts: .serverWins)
        #expect(alice == Settings(theme: "dark"))
        #expect(bob == Settings(theme: "dark"))
    }

    @Test func byDefaultTheLastWriteWins() async throws {
        let (alice, bob) = try await twoAppsChangingOffline(conflicts: .rerunUpdate)
        #expect(alice == Settings(fontSize: 20))
        #expect(bob == Settings(fontSize: 20))
    }

    /// Both apps know the server's first value; offline, Alice sets the theme and Bob the font size; Alice pushes
    /// first, Bob once she is synced. Returns what each app shows once both are synced.
    private func twoAppsChangingOffline(conflicts: ConflictPolicy) async throws -> (Settings, Settings) {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            let first = try JSONEncoder().encode(Settings())
            #expect(try await server.request("PUT", "containers/settings", body: first, headers: ["If-None-Match": "*"]).status == 204)
            return server.port
        }
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        let aliceCache = Fixture.temporaryFolder()
        let bobCache = Fixture.temporaryFolder()
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { _ async throws in
            for cache in [aliceCache, bobCache] {
                let remote = try remote(url, cache: cache, conflicts: conflicts)
                _ = try remote.load(key: "settings")
                #expect(await eventually { (try? remote.cache.entry("settings").version) == 1 })
            }
        }
        // Each app writes, offline, and stops; each pushes when it runs again, Alice first.
        for (cache, change) in [(aliceCache, Settings(theme: "dark")), (bobCache, Settings(fontSize: 20))] {
            let container = settings(try remote(url, cache: cache, conflicts: conflicts))
            container.modify(change)
            try container.flush()
        }
        return try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            let alice = try remote(url, cache: aliceCache, conflicts: conflicts)
            let aliceSettings = settings(alice)
            #expect(await eventually { alice.status == .synced })
            let bob = try remote(url, cache: bobCache, conflicts: conflicts)
            let bobSettings = settings(bob)
            #expect(await eventually { bob.status == .synced })
            let onServer = try #require(try await stored(server))
            #expect(await eventually { aliceSettings.value == onServer && bobSettings.value == onServer })
            return (aliceSettings.value, bobSettings.value)
        }
    }

    /// A token that may only read: the write stays in the app and in the cache, and the status says why it cannot
    /// be pushed, until someone fixes it.
    @Test func aRefusedWriteIsKeptAndReported() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let remote = try remote(server.url, token: Fixture.reader)
            let container = settings(remote)
            container.modify(Settings(theme: "not mine to set"))
            #expect(await eventually {
                if case .failed(.refusedByServer(status: 403, _)) = remote.status { true } else { false }
            })
            #expect(container.value == Settings(theme: "not mine to set"))
            #expect(try remote.load(key: "settings") == (try JSONEncoder.sortedKeys.encode(Settings(theme: "not mine to set"))))
            #expect(try await stored(server) == nil)
        }
    }

    @Test func aCacheFolderServesOneStorageAtATime() throws {
        let cache = Fixture.temporaryFolder()
        let first = try remote(URL(string: "http://127.0.0.1:9/")!, cache: cache)
        #expect(throws: SyncError.outboxInUse(path: cache.path)) { try remote(URL(string: "http://127.0.0.1:9/")!, cache: cache) }
        withExtendedLifetime(first) {}
    }

    @Test func aKeyTheRoutesCannotCarryIsRefused() throws {
        let remote = try remote(URL(string: "http://127.0.0.1:9/")!)
        #expect(throws: StorageError.self) { try remote.save(Data("{}".utf8), key: "a/b") }
        #expect(throws: StorageError.self) { try remote.load(key: String(repeating: "k", count: 65)) }
    }

    /// A storage and its container, once the app lets both go, are deallocated: no task or closure keeps them.
    @Test func aStorageWithAContainerIsReleased() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let released = Cell(Weak<RemoteStorage>())
            do {
                let remote = try remote(server.url)
                released.value = Weak(remote)
                let container = settings(remote)
                container.modify(Settings(theme: "before letting go"))
                try container.flush()
                #expect(await eventually { remote.status == .synced })
                await offThePool { container.update { $0.fontSize += 1 } }
                #expect(await eventually { remote.status == .synced })
            }
            #expect(await eventually { released.value.object == nil })
        }
    }

    /// A storage let go stops following: its feeds close on the server.
    @Test func aStorageLetGoClosesItsFeeds() async throws {
        // A short heartbeat: the server notices a closed feed when it next writes to it.
        let syncServer = try Fixture.server(limits: SyncLimits(heartbeat: .milliseconds(100)))
        try await withRunningServer(syncServer) { server async throws in
            do {
                let remote = try remote(server.url)
                _ = try remote.load(key: "settings")
                #expect(await eventually { syncServer.containerFollowerCounts["settings"] == 1 })
            }
            #expect(await eventually { syncServer.containerFollowerCounts["settings"] == 0 })
        }
    }
}

extension JSONEncoder {
    fileprivate static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}

/// An object, not kept alive.
private struct Weak<Object: AnyObject & Sendable>: Sendable {
    weak var object: Object?

    init(_ object: Object? = nil) {
        self.object = object
    }
}
