import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Synchronization
import Testing

/// An `update` on a `RemoteStorage` is a transaction on the server's value: the container shows what it stored or
/// a newer value, never an older one, and an update whose answer is lost is never applied twice or over another
/// app's. Each test scripts a server (in this process, on loopback) to order the network's answers.
@Suite struct RemoteUpdateTests {
    private static func event(_ settings: Settings, version: Int64) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var buffer = ByteBuffer(string: "id: \(version)\nevent: \(ContainerEvent.value)\ndata: ")
        buffer.writeBytes(try! encoder.encode(settings))
        buffer.writeString("\n\n")
        return buffer
    }

    /// An `update`'s write is stored as version 6, but another app's version 7 reaches this app's feed before the
    /// 204 of version 6 does (the network may order them so). The cache then holds version 7, and the container
    /// must show it: a container showing version 6's value while the server and the cache hold 7 is stale until
    /// someone writes again.
    @Test func anUpdateWhoseAnswerComesAfterANewerFeedValueStillShowsTheNewest() async throws {
        let initial = Settings(theme: "v5", fontSize: 50)
        let newer = Settings(theme: "another app", fontSize: 99)
        let remoteBox = Cell<RemoteStorage?>(nil)
        let (events, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        let feedTaken = Cell(false)
        let router = Router()
        router.get("containers/settings") { _, _ -> Response in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return Response(
                status: .ok, headers: [.contentType: "application/json", .eTag: "\"5\""],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try! encoder.encode(initial)))
            )
        }
        router.put("containers/settings") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 1 << 20)
            guard request.headers[.ifMatch] == "\"5\"" else {
                return Response(status: .preconditionFailed, headers: [.eTag: "\"7\""])
            }
            // Stored as 6; another app's 7 goes out on the feed before this answer does.
            feed.yield(Self.event(newer, version: 7))
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline,
                (try? remoteBox.value?.cache.entry("settings").version) != 7 {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return Response(status: .noContent, headers: [.eTag: "\"6\""])
        }
        router.get("containers/settings/events") { _, _ -> Response in
            let first = feedTaken.withLock { taken in
                defer { taken = true }
                return !taken
            }
            guard first else { return Response(status: .serviceUnavailable) }
            feed.yield(Self.event(initial, version: 5))
            return eventStream(events)
        }
        try await serving(router) { port in
            let remote = try RemoteStorage(
                server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer, cache: Fixture.temporaryFolder()
            )
            remoteBox.value = remote
            let container = StateContainer(Settings(), key: "settings", storage: remote)
            #expect(await eventually(timeout: .seconds(60)) { container.value == initial })
            await offThePool { container.update { $0.fontSize += 1 } }
            #expect(try remote.load(key: "settings").map { try JSONDecoder().decode(Settings.self, from: $0) } == newer)
            // Far longer than the feed's notification and the container's 5-second safety net.
            #expect(await eventually(timeout: .seconds(15)) { container.value == newer }, "the container shows \(container.value)")
            feed.finish()
        }
    }

    /// The contract of `TransactionalStorage.transact`: throw only when nothing was stored, or say so with
    /// `outcomeIsUnknown`; `update` never applies itself twice. Here the server stalls on an `update`'s write (its
    /// disk, say) past the client's 10 s timeout, and stores it afterwards. Nothing the client reads meanwhile tells
    /// (the server is still at the version the update read), so running the update again would count it twice once
    /// the stalled write lands: the update fails instead, with its outcome unknown, and is sent once.
    @Test func anUpdateWhoseAnswerIsLostIsSentOnce() async throws {
        let remoteBox = Cell<RemoteStorage?>(nil)
        let firstLanded = Cell(false)
        let container = ScriptedContainer(Settings(fontSize: 50), version: 5) { container, body, put in
            let deadline = ContinuousClock.now + .seconds(60)
            if put == 1 {
                // Stalled until the client gave up on it (or sent another write), then stored.
                func gaveUp() -> Bool {
                    container.puts.value > 1 || remoteBox.value.map { if case .offline = $0.status { true } else { false } } == true
                }
                while ContinuousClock.now < deadline, !gaveUp() { try? await Task.sleep(for: .milliseconds(5)) }
                defer { firstLanded.value = true }
                return nil
            }
            while ContinuousClock.now < deadline, !firstLanded.value { try? await Task.sleep(for: .milliseconds(5)) }
            return nil
        }
        try await serving(container.router()) { port in
            let remote = try RemoteStorage(
                server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer, cache: Fixture.temporaryFolder()
            )
            remoteBox.value = remote
            let settings = StateContainer(Settings(), key: "settings", storage: remote)
            #expect(await eventually(timeout: .seconds(60)) { settings.value.fontSize == 50 })
            await offThePool { settings.update { $0.fontSize += 1 } }
            #expect(await eventually(timeout: .seconds(60)) { firstLanded.value })
            #expect(settings.storageError?.value.map(remote.outcomeIsUnknown(after:)) == true)
            #expect(container.puts.value == 1)
            #expect(try JSONDecoder().decode(Settings.self, from: container.state.value.value).fontSize == 51)
            container.finish()
        }
    }

    /// A write made offline, still waiting, goes before a later `update`: pushed after the update's transaction, it
    /// would replace what the update stored. Here the push of a local write fails (503) and the storage is offline;
    /// the update then goes on top of it, and both end on the server.
    @Test func anUpdateAfterAnOfflineWriteKeepsItsIncrement() async throws {
        let acceptLocal = Cell(false)
        let refusedLocal = Cell(0)
        let container = ScriptedContainer(Settings(theme: "v5", fontSize: 50), version: 5) { _, body, _ in
            guard try JSONDecoder().decode(Settings.self, from: body).theme == "local", !acceptLocal.value else { return nil }
            refusedLocal.withLock { $0 += 1 }
            return Response(status: .serviceUnavailable)
        }
        try await serving(container.router()) { port in
            let remote = try RemoteStorage(
                server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer, cache: Fixture.temporaryFolder()
            )
            let settings = StateContainer(Settings(), key: "settings", storage: remote)
            #expect(await eventually(timeout: .seconds(60)) { settings.value.fontSize == 50 })
            await offThePool { settings.modify(Settings(theme: "local", fontSize: 50)) }
            #expect(await eventually(timeout: .seconds(60)) {
                if case .offline = remote.status { refusedLocal.value > 0 } else { false }
            })
            await offThePool { settings.update { $0.fontSize += 1 } }
            acceptLocal.value = true
            remote.syncNow()
            #expect(await eventually(timeout: .seconds(60)) { (try? remote.cache.entry("settings").pending) == nil })
            let onServer = try JSONDecoder().decode(Settings.self, from: container.state.value.value)
            #expect(onServer == Settings(theme: "local", fontSize: 51), "the server holds \(onServer)")
            container.finish()
        }
    }

    /// Runs `body` with `router` listening on a free loopback port, and stops it whatever `body` does.
    private func serving(_ router: Router<BasicRequestContext>, _ body: (Int) async throws -> Void) async throws {
        let listening = try await ListeningRouter.start(router)
        do {
            try await body(listening.port)
        } catch {
            await listening.stop()
            throw error
        }
        await listening.stop()
    }
}

/// A container's routes on a scripted server: its value and version, a feed that opens with them, and writes
/// stored only with an `If-Match` naming the version, unless the test's `put` answers first (`nil`: it does not).
private final class ScriptedContainer: Sendable {
    typealias Put = @Sendable (ScriptedContainer, _ body: Data, _ put: Int) async throws -> Response?

    let state: Cell<(version: Int64, value: Data)>
    let puts = Cell(0)
    private let put: Put
    private let events: AsyncStream<ByteBuffer>
    private let feed: AsyncStream<ByteBuffer>.Continuation

    init(_ settings: Settings, version: Int64, put: @escaping Put) {
        state = Cell((version, try! Self.encode(settings)))
        self.put = put
        (events, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
    }

    static func encode(_ settings: Settings) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(settings)
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("containers/settings") { _, _ -> Response in
            let (version, value) = self.state.value
            return Response(
                status: .ok, headers: [.contentType: "application/json", .eTag: "\"\(version)\""],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: value))
            )
        }
        router.put("containers/settings") { request, _ -> Response in
            let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            let number = self.puts.withLock { count in
                count += 1
                return count
            }
            if let scripted = try await self.put(self, body, number) { return scripted }
            let stored: Int64? = self.state.withLock { current in
                guard request.headers[.ifMatch] == "\"\(current.version)\"" else { return nil }
                current = (current.version + 1, body)
                return current.version
            }
            guard let stored else {
                return Response(status: .preconditionFailed, headers: [.eTag: "\"\(self.state.value.version)\""])
            }
            return Response(status: .noContent, headers: [.eTag: "\"\(stored)\""])
        }
        router.get("containers/settings/events") { _, _ -> Response in
            let (version, value) = self.state.value
            var opening = ByteBuffer(string: "id: \(version)\nevent: \(ContainerEvent.value)\ndata: ")
            opening.writeBytes(value)
            opening.writeString("\n\n")
            return eventStream(first: opening, self.events)
        }
        return router
    }

    /// Ends the feed, so that the server can stop.
    func finish() {
        feed.finish()
    }
}
