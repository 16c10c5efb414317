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
private func withAPI(_ test: @Sendable (any TestClientProtocol, TimeTracker) async throws -> Void) async throws {
    let database = TemporaryDatabase()
    let tracker = try TestClock().tracker(at: database.path)
    let application = Application(router: WebApplication.router(tracker: tracker))
    try await application.test(.router) { client in try await test(client, tracker) }
}

private func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

/// What the page sends with every change (see `RequestGuard`).
private let jsonHeaders: HTTPFields = [.contentType: "application/json"]

private func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    try JSONDecoder().decode(type, from: Data(response.body.readableBytesView))
}

private struct ErrorBody: Decodable { var error: String }

@Suite("JSON API")
struct APITests {
    @Test func addStartStopDeleteAndList() async throws {
        try await withAPI { client, _ in
            let created = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":" Writing "}"#))
            #expect(created.status == .created)
            let project = try decode(ProjectPayload.self, created)
            #expect(project.name == "Writing" && !project.running)
            let started = try await client.execute(uri: "/api/projects/\(project.id)/start", method: .post, headers: jsonHeaders)
            #expect(started.status == .ok)
            #expect(try decode(ProjectPayload.self, started).running)
            #expect(try decode(ProjectPayload.self, started).runningSince != nil)
            let stopped = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post, headers: jsonHeaders)
            #expect(try decode(ProjectPayload.self, stopped).running == false)
            let list = try await client.execute(uri: "/api/projects", method: .get)
            #expect(list.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try decode([ProjectPayload].self, list).map(\.name) == ["Writing"])
            let deleted = try await client.execute(uri: "/api/projects/\(project.id)", method: .delete, headers: jsonHeaders)
            #expect(deleted.status == .noContent)
            #expect(try decode([ProjectPayload].self, try await client.execute(uri: "/api/projects", method: .get)).isEmpty)
            let restored = try await client.execute(uri: "/api/projects/\(project.id)/restore", method: .post, headers: jsonHeaders)
            #expect(restored.status == .ok)
            #expect(try decode(ProjectPayload.self, restored).id == project.id)
            #expect(try decode([ProjectPayload].self, try await client.execute(uri: "/api/projects", method: .get)).map(\.name) == ["Writing"])
        }
    }

    @Test(arguments: [
        ("not json", "Send a JSON object"),
        (#"{"title":"x"}"#, "Send a JSON object"),
        (#"{"name":42}"#, "Send a JSON object"),
        (#"{"name":"  "}"#, "needs a name"),
        (#"{"name":"a\nb"}"#, "control characters"),
    ])
    func badInputIs400WithAMessageAndChangesNothing(body: String, message: String) async throws {
        try await withAPI { client, tracker in
            let response = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(body))
            #expect(response.status == .badRequest)
            #expect(try decode(ErrorBody.self, response).error.contains(message))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }

    @Test func refusedActionsGetTheirStatusAndChangeNothing() async throws {
        try await withAPI { client, tracker in
            let project = try decode(
                ProjectPayload.self,
                try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"Writing"}"#))
            )
            let duplicate = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"WRITING"}"#))
            #expect(duplicate.status == .conflict)
            #expect(try decode(ErrorBody.self, duplicate).error.contains("already exists"))
            let notRunning = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post, headers: jsonHeaders)
            #expect(notRunning.status == .conflict)
            let missing = try await client.execute(uri: "/api/projects/999/start", method: .post, headers: jsonHeaders)
            #expect(missing.status == .notFound)
            #expect(try decode(ErrorBody.self, missing).error == "There is no project with id 999.")
            let notAnID = try await client.execute(uri: "/api/projects/abc", method: .delete, headers: jsonHeaders)
            #expect(notAnID.status == .badRequest)
            #expect(tracker.store.state.projects.map(\.name) == ["Writing"])
            #expect(tracker.store.state.projects.allSatisfy { !$0.isRunning })
        }
    }

    @Test func anOversizedBodyIsRefused() async throws {
        try await withAPI { client, tracker in
            let body = #"{"name":""# + String(repeating: "x", count: 20_000) + #""}"#
            let response = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(body))
            #expect(response.status == .contentTooLarge)
            #expect(try decode(ErrorBody.self, response).error.contains("16 KiB"))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }
}

private final class AnsweredCount: Sendable {
    let count = Atomic(0)
}

@Suite("A database another program holds", .serialized)
struct LockedDatabaseTests {
    // Issue 11: two waiting POSTs (as many as cores) blocked every request, the page and the event streams included:
    // the database work ran on the threads that serve requests.
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
                #expect(await eventually(timeout: .seconds(30)) { tracker.store.runningEffects == 8 })
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

@Suite("The page")
struct PageTests {
    @Test func thePageSetsNamesAsTextOnlyAndForbidsInlineScripts() async throws {
        try await withAPI { client, tracker in
            try await tracker.perform(.addProject(name: "<script>alert(1)</script>"))
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            let html = String(buffer: page.body)
            #expect(!html.contains("alert(1)"))  // names never travel in the HTML
            let script = String(buffer: try await client.execute(uri: "/app.js", method: .get).body)
            #expect(script.contains("textContent"))
            #expect(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML") && !script.contains("document.write"))
        }
    }
}

@Suite("Live events", .serialized)
struct EventTests {
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
}

@Suite("Requests the tracker did not invite")
struct RequestGuardTests {
    private let guarded = RequestGuard(listeningHost: "127.0.0.1", extraHosts: ["tracker.example"])

    @Test(arguments: ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "LOCALHOST", "tracker.example:443"])
    func requestsForThisServerPass(authority: String) {
        #expect(guarded.refusal(for: .init(method: .get, authority: authority)) == nil)
        #expect(guarded.refusal(for: .init(
            method: .post, authority: authority, origin: "http://\(authority)", contentType: "application/json; charset=utf-8"
        )) == nil)
    }

    // Issue 11: a DNS-rebinding page addresses the tracker by its own name; reads and deletes were answered.
    @Test(arguments: [HTTPRequest.Method.get, .delete])
    func anotherHostIsMisdirected(method: HTTPRequest.Method) {
        let refusal = guarded.refusal(for: .init(method: method, authority: "attacker.example:8080"))
        #expect(refusal?.status == .misdirectedRequest)
        #expect(refusal?.message.contains("--allow-host attacker.example") == true)
    }

    // Issue 11: a cross-origin form POST and a no-cors fetch created and started projects.
    @Test(arguments: [nil, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
    func aChangeThatIsNotJSONIsRefused(contentType: String?) {
        let refusal = guarded.refusal(for: .init(method: .post, authority: "127.0.0.1:8080", contentType: contentType))
        #expect(refusal?.status == .unsupportedMediaType)
    }

    @Test func aChangeFromAnotherOriginIsForbidden() {
        let refusal = guarded.refusal(for: .init(
            method: .post, authority: "127.0.0.1:8080", origin: "http://evil.example", contentType: "application/json"
        ))
        #expect(refusal?.status == .forbidden)
    }

    // Issue 11: a 10 MB Content-Length with no body waited for the body instead of being refused at once.
    @Test func aBodyAnnouncedTooLargeIsRefusedBeforeItIsRead() {
        let refusal = guarded.refusal(for: .init(
            method: .post, authority: "127.0.0.1:8080", contentType: "application/json", contentLength: 10_000_000
        ))
        #expect(refusal?.status == .contentTooLarge)
    }

    @Test func aServerOnAnotherAddressDoesNotAnswerToLoopbackNames() {
        let remote = RequestGuard(listeningHost: "192.0.2.10")
        #expect(remote.refusal(for: .init(method: .get, authority: "192.0.2.10:8080")) == nil)
        #expect(remote.refusal(for: .init(method: .get, authority: "localhost:8080")) != nil)
    }

    // Issue 11: `serve --host` beyond loopback answered anyone on the network.
    @Test func withATokenTheAPINeedsItAndThePageDoesNot() {
        let remote = RequestGuard(listeningHost: "192.0.2.10", accessToken: "0123456789abcdef-xyz")
        let authority = "192.0.2.10:8080"
        #expect(remote.refusal(for: .init(method: .get, authority: authority))?.status == .unauthorized)
        #expect(remote.refusal(for: .init(method: .get, authority: authority, token: "0123456789abcdef-xyy"))?.status == .unauthorized)
        #expect(remote.refusal(for: .init(method: .get, authority: authority, token: "0123456789abcdef-xyz")) == nil)
        #expect(remote.refusal(for: .init(method: .get, path: "/", authority: authority)) == nil)
        #expect(remote.refusal(for: .init(method: .get, path: "/app.js", authority: authority)) == nil)
        // Denied by default: whatever a router might make of a path, only the page is open.
        for path in ["//api/projects", "/API/projects", "/%61pi/projects", "/./api/projects", "/x/../api/projects"] {
            #expect(remote.refusal(for: .init(method: .get, path: path, authority: authority))?.status == .unauthorized)
        }
    }

    @Test func throughTheRouterRefusalsChangeNothingAndEveryResponseForbidsFraming() async throws {
        try await withAPI { client, tracker in
            let form = try await client.execute(
                uri: "/api/projects", method: .post, headers: [.contentType: "text/plain"], body: json(#"{"name":"x"}"#)
            )
            #expect(form.status == .unsupportedMediaType)
            let crossOrigin = try await client.execute(
                uri: "/api/projects", method: .post,
                headers: [.contentType: "application/json", .origin: "http://evil.example"], body: json(#"{"name":"x"}"#)
            )
            #expect(crossOrigin.status == .forbidden)
            #expect(try decode(ErrorBody.self, crossOrigin).error.contains("evil.example"))
            #expect(tracker.store.state.projects.isEmpty)
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.headers[.xFrameOptions] == "DENY")
            #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            #expect(form.headers[.xFrameOptions] == "DENY")
        }
    }

    @Test func throughTheRouterTheTokenComesAsBearerOrForEventsInTheQuery() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let token = "0123456789abcdef-token"
        let application = Application(router: WebApplication.router(
            tracker: tracker, requestGuard: RequestGuard(listeningHost: "127.0.0.1", accessToken: token)
        ))
        try await application.test(.router) { client in
            let without = try await client.execute(uri: "/api/projects", method: .get)
            #expect(without.status == .unauthorized)
            #expect(without.headers[.wwwAuthenticate] == "Bearer")
            let bearer = try await client.execute(uri: "/api/projects", method: .get, headers: [.authorization: "Bearer \(token)"])
            #expect(bearer.status == .ok)
            let add = try await client.execute(
                uri: "/api/projects", method: .post,
                headers: [.contentType: "application/json", .authorization: "Bearer \(token)"], body: json(#"{"name":"x"}"#)
            )
            #expect(add.status == .created)
            #expect(try await client.execute(uri: "/api/events?token=nope", method: .head).status == .unauthorized)
            #expect(try await client.execute(uri: "/api/events?token=\(token)", method: .head).status == .ok)
            #expect(try await client.execute(uri: "/", method: .get).status == .ok)
        }
    }
}

@Suite("Methods and routes")
struct RouteTests {
    // Issue 11: HEAD / was 404, and a wrong method on a known route 404 instead of 405 with Allow.
    @Test func headIsAnsweredForEveryPage() async throws {
        try await withAPI { client, _ in
            let head = try await client.execute(uri: "/", method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            #expect(try await client.execute(uri: "/app.js", method: .head).status == .ok)
        }
    }

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
                    #expect(status != .notFound || uri.hasPrefix("/api/projects/"), "\(method) \(uri): \(status)")
                    #expect(status != .methodNotAllowed, "\(method) \(uri)")
                }
            }
        }
    }
}
