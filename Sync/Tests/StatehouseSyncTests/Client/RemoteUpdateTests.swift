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
    /// `outcomeIsUnknown`; `update` never silently undoes another app's update. Here the server stores an
    /// `update`'s write (50 → 51) but its answer is lost (the client's 10 s timeout); another app then increments
    /// (51 → 52). Taking the timeout for "offline" and keeping 51 as a local write would push it over 52: the other
    /// app's increment lost, and the update reported as done.
    @Test func anUpdateWhoseAnswerIsLostDoesNotUndoAnotherAppsUpdate() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let remoteBox = Cell<RemoteStorage?>(nil)
        let state = Cell<(version: Int64, value: Data)>((5, try encoder.encode(Settings(fontSize: 50))))
        let puts = Cell(0)
        let reads = Cell(0)
        let (events, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        let router = Router()
        router.get("containers/settings") { _, _ -> Response in
            let (version, value) = state.value
            reads.withLock { $0 += 1 }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .eTag: "\"\(version)\""],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: value))
            )
        }
        router.put("containers/settings") { request, _ -> Response in
            let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            let n = puts.withLock { count in
                count += 1
                return count
            }
            if n == 1 {
                // Stored as 6; the answer is held until the client gave up on it and read the key again.
                let readsBefore = reads.value
                state.withLock { $0 = (6, body) }
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline, reads.value == readsBefore {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                // Another app's update: 51 → 52, as version 7.
                var other = try JSONDecoder().decode(Settings.self, from: body)
                other.fontSize += 1
                let otherBytes = try encoder.encode(other)
                state.withLock { $0 = (7, otherBytes) }
                return Response(status: .noContent, headers: [.eTag: "\"6\""])
            }
            let stored: Int64? = state.withLock { current in
                guard request.headers[.ifMatch] == "\"\(current.version)\"" else { return nil }
                current = (current.version + 1, body)
                return current.version
            }
            guard let stored else {
                return Response(status: .preconditionFailed, headers: [.eTag: "\"\(state.value.version)\""])
            }
            return Response(status: .noContent, headers: [.eTag: "\"\(stored)\""])
        }
        router.get("containers/settings/events") { _, _ -> Response in
            let (version, value) = state.value
            var opening = ByteBuffer(string: "id: \(version)\nevent: \(ContainerEvent.value)\ndata: ")
            opening.writeBytes(value)
            opening.writeString("\n\n")
            return eventStream(first: opening, events)
        }
        try await serving(router) { port in
            let remote = try RemoteStorage(
                server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer, cache: Fixture.temporaryFolder()
            )
            remoteBox.value = remote
            let container = StateContainer(Settings(), key: "settings", storage: remote)
            #expect(await eventually(timeout: .seconds(60)) { container.value.fontSize == 50 })
            await offThePool { container.update { $0.fontSize += 1 } }
            #expect(await eventually(timeout: .seconds(60)) { state.value.version >= 7 && (try? remote.cache.entry("settings").pending) == nil })
            let onServer = try JSONDecoder().decode(Settings.self, from: state.value.value)
            #expect(onServer.fontSize == 52, "two increments from 50, the server holds \(onServer.fontSize) at version \(state.value.version)")
            feed.finish()
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
