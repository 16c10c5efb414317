import Foundation
import HTTPTypes
import Hummingbird
import StatehouseInspector

/// Refuses the requests the tracker did not invite, before any route sees them, and forbids framing the page.
///
/// Any page the user visits can send requests to `127.0.0.1`: a form POST or a `no-cors` fetch from another origin
/// reaches the server (the browser only hides the answer), and a DNS-rebinding page even reads the answers, since to
/// the browser the tracker is then its own origin. So:
/// - the `Host` must name this server: the host it listens on, the loopback names when it listens on loopback, or a
///   name passed with `--allow-host` (421 otherwise; this stops DNS rebinding);
/// - with an access token (required when the server listens beyond loopback, where anyone on the network can
///   connect), every request but those for the page itself (`/`, `/app.js`) must present it (401 otherwise);
/// - a state-changing request must say `Content-Type: application/json` (415 otherwise), which a page of another
///   origin cannot send without the browser asking first (CORS preflight), must come from this origin when it says
///   where it comes from (`Origin`, 403 otherwise), and must announce at most ``maximumBodySize`` (413 at once,
///   before the body is read), but for the sync routes (`/sync/`), which keep to the sync server's limits;
/// - every response forbids framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), so no page can overlay it.
public struct RequestGuard: Sendable {
    /// The largest request body, in bytes.
    public static let maximumBodySize = 16 * 1024

    /// The host names requests may address, lowercased, without port or brackets.
    let allowedHosts: Set<String>
    /// What `/api/` requests must present, if anything.
    let accessToken: String?

    /// - Parameters:
    ///   - listeningHost: The address the server listens on (`--host`).
    ///   - extraHosts: Further names the user allowed (`--allow-host`), for a server reached by another name.
    ///   - accessToken: What every request but the page's must present, as `Authorization: Bearer …` or, for the
    ///     event stream, which a browser opens without headers, `?token=…`.
    public init(listeningHost: String, extraHosts: [String] = [], accessToken: String? = nil) {
        var hosts = Set(([listeningHost] + extraHosts).map { Self.hostname(of: $0) })
        listensEverywhere = ["0.0.0.0", "::", ""].contains(Self.hostname(of: listeningHost))
        if listensEverywhere || hosts.contains(where: Self.isLoopback) { hosts.formUnion(["localhost", "127.0.0.1", "::1"]) }
        allowedHosts = hosts
        self.accessToken = accessToken
    }

    /// Listening on every address, the server is reached by any of the machine's addresses. An address is not a
    /// name, so it cannot be rebound: any address literal is accepted then, names only if allowed.
    let listensEverywhere: Bool

    private func answers(to host: String) -> Bool {
        allowedHosts.contains(host) || (listensEverywhere && Self.isAddressLiteral(host))
    }

    static func isAddressLiteral(_ host: String) -> Bool {
        var ipv4 = in_addr(), ipv6 = in6_addr()
        return inet_pton(AF_INET, host, &ipv4) == 1 || inet_pton(AF_INET6, host, &ipv6) == 1
    }

    /// What the guard looks at in a request.
    public struct Facts: Sendable {
        public var method: HTTPRequest.Method
        public var path: String
        /// The request's `Host` (with its port, if any); `nil` for a request without one (tests in process).
        public var authority: String?
        public var origin: String?
        public var contentType: String?
        public var contentLength: Int?
        /// The access token the request presents, if any.
        public var token: String?

        public init(
            method: HTTPRequest.Method, path: String = "/api/projects", authority: String? = nil, origin: String? = nil,
            contentType: String? = nil, contentLength: Int? = nil, token: String? = nil
        ) {
            self.method = method
            self.path = path
            self.authority = authority
            self.origin = origin
            self.contentType = contentType
            self.contentLength = contentLength
            self.token = token
        }
    }

    /// Why a request is refused, with the status and a message that says what to do.
    public struct Refusal: Equatable, Sendable {
        public let status: HTTPResponse.Status
        public let message: String
    }

    /// The decision, apart from HTTP: `nil` lets the request through.
    public func refusal(for request: Facts) -> Refusal? {
        if let authority = request.authority, !answers(to: Self.hostname(of: authority)) {
            return Refusal(status: .misdirectedRequest, message: """
                This server does not answer to \(authority). Open it by the address it printed, or start it with \
                --allow-host \(Self.hostname(of: authority)) if that name is yours.
                """)
        }
        // Denied by default: only the page itself (which holds no data) is open. Matching what the API is instead
        // would have to match the router's reading of paths exactly (`//api/projects` is `/api/projects` to it).
        let segments = request.path.split(separator: "/")
        let isThePage = segments.isEmpty || segments == ["app.js"]
        if let accessToken, !isThePage, !Self.same(request.token, accessToken) {
            return Refusal(status: .unauthorized, message: """
                This tracker needs its access token: open it by the link `timetrack serve` printed (it ends in \
                #token=…), or send Authorization: Bearer TOKEN.
                """)
        }
        guard ![.get, .head, .options].contains(request.method) else { return nil }
        // Behind an HTTPS proxy (`--allow-host`), the page's origin is https://NAME for the Host NAME.
        if let origin = request.origin, !(request.authority.map { ["http://\($0)", "https://\($0)"].contains(origin) } ?? false) {
            return Refusal(status: .forbidden, message: "Changes come from the tracker's own page, not from \(origin).")
        }
        let mediaType = request.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" else {
            return Refusal(status: .unsupportedMediaType, message: "Send changes with Content-Type: application/json.")
        }
        // The sync routes take batches of actions, and keep to the sync server's own limits (`SyncLimits`).
        if let length = request.contentLength, length > Self.maximumBodySize, segments.first != "sync" {
            return Refusal(status: .contentTooLarge, message: "A request body has at most 16 KiB.")
        }
        return nil
    }

    /// The inspector's rules (``HostRules``), so that the tracker's page and its inspector refuse the same requests.
    static func same(_ presented: String?, _ expected: String) -> Bool {
        HostRules.tokenMatches(presented, expected)
    }

    static func hostname(of authority: String) -> String {
        HostRules.hostname(of: authority)
    }

    /// Whether `host` (an address or a name, without port) is this machine's loopback, which only this machine reaches.
    public static func isLoopback(_ host: String) -> Bool {
        HostRules.isLoopback(host)
    }
}

/// Applies a ``RequestGuard`` to every request, and adds the anti-framing headers to every response.
struct RequestGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let requestGuard: RequestGuard

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        let facts = RequestGuard.Facts(
            method: request.method, path: request.uri.path, authority: request.head.authority,
            origin: request.headers[.origin], contentType: request.headers[.contentType],
            contentLength: request.headers[.contentLength].flatMap { Int($0) },
            token: Self.bearerToken(request.headers[.authorization]) ?? Self.queryToken(of: request)
        )
        if let refusal = requestGuard.refusal(for: facts) {
            response = APIResponse.error(refusal.status, refusal.message)
            if refusal.status == .unauthorized { response.headers[.wwwAuthenticate] = "Bearer" }
        } else {
            response = try await next(request, context)
        }
        let policy = response.headers[.contentSecurityPolicy]
        response.headers[.contentSecurityPolicy] = policy.map { "\($0); frame-ancestors 'none'" } ?? "frame-ancestors 'none'"
        response.headers[.xFrameOptions] = "DENY"
        return response
    }

    /// `?token=` counts for the event stream only, which a browser opens without headers: a token in a URL ends up
    /// in logs and histories, so no other route takes one.
    private static func queryToken(of request: Request) -> String? {
        guard request.uri.path.split(separator: "/") == ["api", "events"] else { return nil }
        return request.uri.queryParameters.get("token")
    }

    private static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return nil }
        return String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
    }
}

extension HTTPField.Name {
    /// Not among HTTPTypes' names: the older way to forbid framing, for browsers without `frame-ancestors`.
    static let xFrameOptions = Self("X-Frame-Options")!
}
