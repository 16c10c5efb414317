import Foundation
import HTTPTypes

/// Refuses every request the inspector's page did not make, before any route sees it.
///
/// The inspector shows a program's state, and moves its stores: any page the user visits can send requests to
/// `127.0.0.1`, and a DNS-rebinding page can even read the answers. So:
/// - the `Host` must name this server: a loopback name when it listens on loopback, or a name it was told to allow
///   (421 otherwise: a rebound name is refused);
/// - every path starts with the inspector's random token, the page and its script included (401 otherwise): the URL
///   the inspector prints is the only way in, and nothing of the page loads without it;
/// - a request that says where it comes from (`Origin`) must come from this server (403 otherwise);
/// - a request that changes something must be `POST` with a JSON or JSON-lines body, which a page of another origin
///   cannot send without the browser asking first (415 otherwise), and at most ``maximumBodySize`` (413).
struct InspectorGuard: Sendable {
    /// The largest request body: an imported recording.
    static let maximumBodySize = 8 * 1024 * 1024

    let token: String
    /// The host names requests may address, lowercased, without port or brackets.
    let allowedHosts: Set<String>

    init(token: String, listeningHost: String, allowedHosts: [String]) {
        self.token = token
        var hosts = Set(allowedHosts.map { HostRules.hostname(of: $0) })
        if HostRules.isLoopback(HostRules.hostname(of: listeningHost)) { hosts.formUnion(["localhost", "127.0.0.1", "::1"]) }
        hosts.insert(HostRules.hostname(of: listeningHost))
        self.allowedHosts = hosts
    }

    struct Refusal: Sendable, Equatable {
        let status: HTTPResponse.Status
        let message: String
    }

    /// `nil` lets the request through.
    func refusal(
        method: HTTPRequest.Method, path: String, authority: String?, origin: String?, contentType: String?,
        contentLength: Int?
    ) -> Refusal? {
        guard let authority else {
            return Refusal(status: .badRequest, message: "A request names the host it is for (Host).")
        }
        if !allowedHosts.contains(HostRules.hostname(of: authority)) {
            return Refusal(status: .misdirectedRequest, message: """
                The inspector does not answer to \(authority): open it by the URL it printed, or start it with \
                allowedHosts: ["\(HostRules.hostname(of: authority))"] if that name is this machine's.
                """)
        }
        let firstSegment = path.split(separator: "/", omittingEmptySubsequences: true).first.map(String.init)
        guard HostRules.tokenMatches(firstSegment, token) else {
            return Refusal(status: .unauthorized, message: "Open the inspector by the URL it printed: it carries its token.")
        }
        let ownOrigins = ["http://", "https://"].map { $0 + authority.lowercased() }
        if let origin, !ownOrigins.contains(origin.lowercased()) {
            return Refusal(status: .forbidden, message: "The inspector answers its own page, not \(origin).")
        }
        guard ![.get, .head].contains(method) else { return nil }
        let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" || mediaType == "application/x-ndjson" else {
            return Refusal(status: .unsupportedMediaType, message: "Send application/json or application/x-ndjson.")
        }
        if let contentLength, contentLength > Self.maximumBodySize {
            return Refusal(status: .contentTooLarge, message: "A request body has at most 8 MiB.")
        }
        return nil
    }
}
