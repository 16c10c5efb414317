import NIOCore
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

@Suite("The projects event, shared by every page", .serialized)
struct ProjectEventsTests {
    /// A change is encoded once for every open page: each page gets the very same bytes, and a page that subscribes
    /// later gets the latest; a page that ends gets nothing more.
    @Test func everyPageGetsTheSameBytesOfOneEncodingAndALatePageGetsTheLatest() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let events = ProjectEvents(tracker: tracker)
        let pages = (0..<3).map { _ in events.subscribe() }
        var iterators = pages.map { $0.events.makeAsyncIterator() }
        for index in iterators.indices {
            #expect(String(buffer: try #require(await iterators[index].next())).contains(#""projects":[]"#))
        }
        try await tracker.perform(.addProject(name: "Writing"))
        var received: [ByteBuffer] = []
        for index in iterators.indices {
            received.append(try #require(await iterators[index].next()))
        }
        #expect(String(buffer: received[0]).hasPrefix("event: projects\ndata: "))
        #expect(String(buffer: received[0]).contains(#""name":"Writing""#))
        // One encoding: the very same storage, not equal copies.
        #expect(received.allSatisfy { $0.withUnsafeReadableBytes { $0.baseAddress } == received[0].withUnsafeReadableBytes { $0.baseAddress } })
        var late = events.subscribe().events.makeAsyncIterator()
        #expect(String(buffer: try #require(await late.next())).contains(#""name":"Writing""#))
        for page in pages { page.end() }
        for index in iterators.indices {
            #expect(await iterators[index].next() == nil)
        }
    }
}
