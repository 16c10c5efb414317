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

/// Runs `test` against the API of a tracker on a new database, through Hummingbird's router test framework.
func withAPI(_ test: @Sendable (any TestClientProtocol, TimeTracker) async throws -> Void) async throws {
    let database = TemporaryDatabase()
    let tracker = try TestClock().tracker(at: database.path)
    let application = Application(router: WebApplication.router(tracker: tracker))
    try await application.test(.router) { client in try await test(client, tracker) }
}

func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

/// What the page sends with every change (see `RequestGuard`).
let jsonHeaders: HTTPFields = [.contentType: "application/json"]

func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    try JSONDecoder().decode(type, from: Data(response.body.readableBytesView))
}

struct ErrorBody: Decodable { var error: String }
