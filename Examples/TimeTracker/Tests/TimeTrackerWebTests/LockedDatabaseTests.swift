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

private final class AnsweredCount: Sendable {
    let count = Atomic(0)
}

@Suite("A database another program holds", .serialized)
struct LockedDatabaseTests {
    /// Writes waiting for another program's lock do not hold up reads: with eight writes waiting (more than the
    /// machine's cores), the list and the page are answered; the database work runs off the threads that serve
    /// requests.
    @Test func readsAnswerWhileEightWritesWaitForTheLock() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .seconds(60))
        let application = Application(router: WebApplication.router(tracker: tracker))
        let holder = try await DatabaseLockHolder(path: database.path)
        try await application.test(.router) { client in
            let answered = AnsweredCount()
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for number in 0..<8 {
                    group.addTask {
                        let response = try await client.execute(
                            uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"P\#(number)"}"#)
                        )
                        answered.count.add(1, ordering: .sequentiallyConsistent)
                        return response.status
                    }
                }
                #expect(await eventually { tracker.store.runningEffects == 8 })
                let list = try await client.execute(uri: "/api/projects", method: .get)
                #expect(list.status == .ok)
                let page = try await client.execute(uri: "/", method: .get)
                #expect(page.status == .ok)
                // Both answered while every write still waits: they did not wait for the writes.
                #expect(answered.count.load(ordering: .sequentiallyConsistent) == 0)
                try await holder.release()
                var statuses: [HTTPResponse.Status] = []
                for try await status in group { statuses.append(status) }
                #expect(statuses == Array(repeating: .created, count: 8))
            }
        }
    }

    @Test func aWriteThatCannotGetTheLockIs503WithRetryAfterAndNoSQL() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .milliseconds(200))
        let application = Application(router: WebApplication.router(tracker: tracker))
        let holder = try await DatabaseLockHolder(path: database.path)
        try await application.test(.router) { client in
            let response = try await client.execute(
                uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"Writing"}"#)
            )
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.retryAfter] == "1")
            let message = try decode(ErrorBody.self, response).error
            #expect(message.contains("locked by another program"))
            #expect(!message.contains("BEGIN") && !message.contains("INSERT") && !message.contains("SQL"))
        }
        try await holder.release()
        #expect(try database.count("project") == 0)
    }
}
