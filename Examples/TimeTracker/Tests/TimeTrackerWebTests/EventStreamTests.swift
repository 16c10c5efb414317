import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Statehouse
import Synchronization
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

@Suite("Live events", .serialized)
struct EventStreamTests {
    @Test func aPageGetsTheStateNowAndEveryChangeWhoeverMadeIt() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let other = try TestClock().tracker(at: database.path)  // another process's connections
        let application = Application(
            router: WebApplication.router(tracker: tracker),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0))
        )
        try await application.test(.live) { client in
            let port = try #require(client.port)
            let events = try EventStreamClient(port: port)
            // First the server's clock (pages tick running timers from it), then the projects.
            #expect(events.next().flatMap(Double.init) != nil)
            #expect(events.next().map { $0.contains(#""projects":[]"#) } == true)
            try await tracker.perform(.addProject(name: "Here"))
            #expect(events.next { $0.contains(#""name":"Here""#) } != nil)
            try await other.perform(.addProject(name: "Elsewhere"))
            #expect(events.next { $0.contains("Elsewhere") } != nil)
        }
    }

    /// A page that does not read: every write waits until `open` is called.
    private final class StalledPage: Sendable {
        let written = Mutex<[String]>([])
        let isOpen = Mutex(false)

        func open() { isOpen.withLock { $0 = true } }

        var heartbeats: Int { written.withLock { $0.filter { $0.hasPrefix(": heartbeat") }.count } }

        struct Writer: ResponseBodyWriter {
            let page: StalledPage
            mutating func write(_ buffer: ByteBuffer) async throws {
                while !page.isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                page.written.withLock { $0.append(String(buffer: buffer)) }
            }

            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    /// A stream whose page fell behind (heartbeats due while it did not read, then enough changes to push them out of
    /// the stream's buffer of the newest four events) still gets heartbeats once the page reads again: a closed page is
    /// then noticed, and a proxy keeps the connection, whether anything changes or not.
    @Test func aStreamThatFellBehindStillGetsHeartbeats() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let stream = EventStream(events: ProjectEvents(tracker: tracker), heartbeat: .milliseconds(50))
        let page = StalledPage()
        let writing = Task {
            try await stream.response().body.write(StalledPage.Writer(page: page))
        }
        defer { writing.cancel() }
        // A window for heartbeats to fall due while the page does not read; then enough changes to fill the
        // stream's buffer.
        try await Task.sleep(for: .milliseconds(500))
        for index in 0..<6 { try await tracker.perform(.addProject(name: "Change \(index)")) }
        try await Task.sleep(for: .milliseconds(200))
        page.open()
        let before = page.heartbeats
        // Heartbeats come every 50 ms: a minute is many hundred intervals, however busy the machine.
        #expect(await eventually { page.heartbeats > before }, "no heartbeat since the page caught up")
    }
}
