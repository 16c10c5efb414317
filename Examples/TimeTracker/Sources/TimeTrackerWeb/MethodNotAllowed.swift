import HTTPTypes
import Hummingbird

/// Answers 405 with `Allow` for a known path asked with a method it does not take.
///
/// Hummingbird's router answers 404 then, as for a path that does not exist; a client should learn that it used the
/// wrong method, not the wrong address. The router does not say which methods a path takes, so ``routes`` lists them:
/// a test checks every entry against the router (`WebApplicationTests`), so that the two cannot drift apart.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Every route's path (`*` stands for any one segment) and methods (HEAD comes with GET).
    static var routes: [(path: String, methods: [HTTPRequest.Method])] {
        [
            ("/", [.get, .head]),
            ("/app.js", [.get, .head]),
            ("/api/events", [.get, .head]),
            ("/api/projects", [.get, .head, .post]),
            ("/api/projects/*", [.patch, .delete]),
            ("/api/projects/*/start", [.post]),
            ("/api/projects/*/stop", [.post]),
            ("/api/projects/*/restore", [.post]),
            ("/api/projects/*/activities", [.get, .head, .post]),
            ("/api/activities/*", [.patch, .delete]),
            ("/api/report", [.get, .head]),
            ("/api/undo", [.post]),
            ("/api/redo", [.post]),
        ]
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let methods = Self.methods(for: request.uri.path) else { throw error }
            let allowed = methods.map(\.rawValue).joined(separator: ", ")
            var response = APIResponse.error(.methodNotAllowed, "\(request.uri.path) takes \(allowed), not \(request.method).")
            response.headers[.allow] = allowed
            return response
        }
    }

    /// The methods of the route `path` matches, or `nil` if it matches none.
    static func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.first { route in
            let pattern = route.path.split(separator: "/", omittingEmptySubsequences: true)
            return pattern.count == segments.count && zip(pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
        }?.methods
    }
}
