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

@Suite("Methods and routes")
struct RouteTests {
    /// HEAD is answered for every page, with no body.
    @Test func headIsAnsweredForEveryPage() async throws {
        try await withAPI { client, _ in
            let head = try await client.execute(uri: "/", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(try await client.execute(uri: "/app.js", method: .head).status == .ok)
        }
    }

    /// A wrong method on a known route is 405 with `Allow`; an unknown route is 404.
    @Test func aWrongMethodOnAKnownRouteIs405WithAllow() async throws {
        try await withAPI { client, _ in
            let put = try await client.execute(uri: "/api/projects", method: .put, headers: jsonHeaders)
            #expect(put.status == .methodNotAllowed)
            #expect(put.headers[.allow] == "GET, HEAD, POST")
            let get = try await client.execute(uri: "/api/projects/3/start", method: .get)
            #expect(get.status == .methodNotAllowed)
            #expect(get.headers[.allow] == "POST")
            #expect(try await client.execute(uri: "/nowhere", method: .get).status == .notFound)
        }
    }

    /// The table behind 405 lists what the router serves: each of its methods reaches a route (not a 404 or 405).
    @Test func theMethodTableMatchesTheRouter() async throws {
        try await withAPI { client, _ in
            for route in MethodNotAllowedMiddleware<BasicRequestContext>.routes {
                let uri = route.path.replacingOccurrences(of: "*", with: "1")
                for method in route.methods where uri != "/api/events" || method == .head {
                    let status = try await client.execute(uri: uri, method: method, headers: jsonHeaders).status
                    // 404 from the route itself: no project or activity 1.
                    let namesARow = uri.hasPrefix("/api/projects/") || uri.hasPrefix("/api/activities/")
                    #expect(status != .notFound || namesARow, "\(method) \(uri): \(status)")
                    #expect(status != .methodNotAllowed, "\(method) \(uri)")
                }
            }
        }
    }
}
