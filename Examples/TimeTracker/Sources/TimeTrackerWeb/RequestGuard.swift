import Foundation
import HTTPTypes
import Hummingbird

/// Refuses the requests the tracker did not invite, before any route sees them, and forbids framing the page.
///
/// Any page the user visits can send requests to `127.0.0.1`: a form POST or a `no-cors` fetch from another origin
/// reaches the server (the browser only hides the answer), and a DNS-rebinding page even reads the answers, since to
/// the browser the tracker is then its own origin. So:
/// - the `Host` must name this server: the host it listens on, the loopback names when it listens on loopback, or a
///   name passed with `--allow-host` (421 otherwise; this stops DNS rebinding);
/// - a state-changing request must say `Content-Type: application/json` (415 otherwise), which a page of another
///   origin cannot send without the browser asking first (CORS preflight), and must come from this origin when it says
///   where it comes from (`Origin`, 403 otherwise);
/// - every response forbids framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), so no page can overlay it.
public struct RequestGuard: Sendable {
    /// The host names requests may address, lowercased, without port or brackets.
    let allowedHosts: Set<String>

    /// - Parameters:
    ///   - listeningHost: The address the server listens on (`--host`).
    ///   - extraHosts: Further names the user allowed (`--allow-host`), for a server reached by another name.
    public init(listeningHost: String, extraHosts: [String] = []) {
        var hosts = Set(([listeningHost] + extraHosts).map { Self.hostname(of: $0) })
        if hosts.contains(where: Self.isLoopback) { hosts.formUnion(["localhost", "127.0.0.1", "::1"]) }
        allowedHosts = hosts
    }

    /// Why a request is refused, with the status and a message that says what to do.
    public struct Refusal: Equatable, Sendable {
        public let status: HTTPResponse.Status
        public let message: String
    }

    /// The decision, apart from HTTP: `nil` lets the request through.
    ///
    /// - Parameters:
    ///   - authority: The request's `Host` (with its port, if any); `nil` for a request without one (tests in process).
    public func refusal(method: HTTPRequest.Method, authority: String?, origin: String?, contentType: String?) -> Refusal? {
        if let authority, !allowedHosts.contains(Self.hostname(of: authority)) {
            return Refusal(status: .misdirectedRequest, message: """
                This server does not answer to \(authority). Open it by the address it printed, or start it with \
                --allow-host \(Self.hostname(of: authority)) if that name is yours.
                """)
        }
        guard ![.get, .head, .options].contains(method) else { return nil }
        if let origin, origin != authority.map({ "http://\($0)" }) {
            return Refusal(status: .forbidden, message: "Changes come from the tracker's own page, not from \(origin).")
        }
        let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" else {
            return Refusal(status: .unsupportedMediaType, message: "Send changes with Content-Type: application/json.")
        }
        return nil
    }

    /// `host`, `host:port`, `[::1]:port` or `::1`, as a lowercase host name without port or brackets.
    static func hostname(of authority: String) -> String {
        let lowered = authority.lowercased()
        if lowered.hasPrefix("["), let end = lowered.firstIndex(of: "]") {
            return String(lowered[lowered.index(after: lowered.startIndex)..<end])
        }
        // More than one colon and no brackets: a bare IPv6 address, which has no port.
        if lowered.filter({ $0 == ":" }).count > 1 { return lowered }
        return String(lowered.split(separator: ":", maxSplits: 1).first ?? "")
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
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
        if let refusal = requestGuard.refusal(
            method: request.method, authority: request.head.authority,
            origin: request.headers[.origin], contentType: request.headers[.contentType]
        ) {
            response = APIResponse.error(refusal.status, refusal.message)
        } else {
            response = try await next(request, context)
        }
        let policy = response.headers[.contentSecurityPolicy]
        response.headers[.contentSecurityPolicy] = policy.map { "\($0); frame-ancestors 'none'" } ?? "frame-ancestors 'none'"
        response.headers[.xFrameOptions] = "DENY"
        return response
    }
}

extension HTTPField.Name {
    /// Not among HTTPTypes' names: the older way to forbid framing, for browsers without `frame-ancestors`.
    static let xFrameOptions = Self("X-Frame-Options")!
}
