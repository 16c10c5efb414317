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

    /// A request for another host (a DNS-rebinding page addresses the tracker by its own name) is misdirected, reads
    /// and deletes alike, and the refusal says how to allow the name.
    @Test(arguments: [HTTPRequest.Method.get, .delete])
    func anotherHostIsMisdirected(method: HTTPRequest.Method) {
        let refusal = guarded.refusal(for: .init(method: method, authority: "attacker.example:8080"))
        #expect(refusal?.status == .misdirectedRequest)
        #expect(refusal?.message.contains("--allow-host attacker.example") == true)
    }

    /// A change that is not JSON (what a cross-origin form or a `no-cors` fetch can send) is refused.
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

    /// A body announced larger than the limit (a 10 MB `Content-Length`) is refused before it is read.
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

    /// With an access token (a server listening beyond loopback), the API needs it and the page does not; a path
    /// that is not the page needs it, whatever a router might make of it.
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

    private static let accessToken = "abcdefghijklmnop0123"

    /// An empty first segment (`//api/…`, which the router takes for `/api/…`) does not skip the token.
    @Test(arguments: ["//api/projects", "//api/events"])
    func anEmptyFirstSegmentDoesNotSkipTheToken(path: String) async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let requestGuard = RequestGuard(listeningHost: "0.0.0.0", accessToken: Self.accessToken)
        let application = Application(router: WebApplication.router(tracker: tracker, requestGuard: requestGuard))
        try await application.test(.router) { client in
            let response = try await client.execute(uri: path, method: path.hasSuffix("events") ? .head : .get)
            #expect(response.status == .unauthorized, "\(path) answered \(response.status) without the token")
        }
    }

    /// A change through `//api/projects` without the token is refused, and changes nothing.
    @Test func anEmptyFirstSegmentDoesNotLetAChangeThroughWithoutTheToken() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let requestGuard = RequestGuard(listeningHost: "0.0.0.0", accessToken: Self.accessToken)
        let application = Application(router: WebApplication.router(tracker: tracker, requestGuard: requestGuard))
        try await application.test(.router) { client in
            let response = try await client.execute(
                uri: "//api/projects", method: .post, headers: jsonHeaders, body: ByteBuffer(string: #"{"name":"x"}"#)
            )
            #expect(response.status == .unauthorized)
        }
        #expect(tracker.store.state.projects.isEmpty)
    }

    /// A name allowed with `--allow-host` may be reached through an HTTPS proxy: the page's `https://` origin for that
    /// name can make changes.
    @Test func thePageBehindAnHTTPSProxyItWasAllowedCanMakeChanges() {
        let requestGuard = RequestGuard(listeningHost: "127.0.0.1", extraHosts: ["tracker.example.com"])
        let refusal = requestGuard.refusal(for: .init(
            method: .post, authority: "tracker.example.com", origin: "https://tracker.example.com",
            contentType: "application/json"
        ))
        #expect(refusal == nil, "\(refusal?.message ?? "")")
    }
}
