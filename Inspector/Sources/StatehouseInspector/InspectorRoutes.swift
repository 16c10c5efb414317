import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationCompat

/// The page and its API, under `/TOKEN/`:
/// - `GET /` the page, `GET inspector.js`, `GET inspector.css`;
/// - `GET api/overview`: the stores, the containers, and the id of the last event;
/// - `GET api/stores/NAME`: a store's log and its state now; `GET api/stores/NAME/states/STEP`: its state after a step;
/// - `POST api/stores/NAME/jump` `{"step": N}` and `POST api/stores/NAME/resume`: move a store that allows it;
/// - `GET api/stores/NAME/export`: the log as the store's JSON-lines recording;
/// - `POST api/stores/NAME/import` (JSON lines): replays a recording with the store's reducer, as `NAME.replay`;
/// - `GET api/events`: the feed (``EventFeed``).
///
/// Refusals are `{"error": "…"}` with a 4xx status.
enum InspectorRoutes {
    static func router(registry: InspectorRegistry, guard requestGuard: InspectorGuard) -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: InspectorGuardMiddleware(requestGuard: requestGuard))
        let root = router.group(RouterPath(requestGuard.token))
        root.get { _, _ in InspectorPage.html }
        root.get("inspector.js") { _, _ in InspectorPage.script }
        root.get("inspector.css") { _, _ in InspectorPage.style }
        root.get("api/overview") { _, _ in try json(registry.overview) }
        root.get("api/events") { request, _ in EventFeed(registry: registry).response(for: request) }
        let stores = root.group("api/stores")
        stores.get(":name") { _, context in
            let name = try parameter("name", context)
            guard let detail = registry.detail(of: name) else { throw failure(.notFound("No store is attached as \(name).")) }
            return try json(detail)
        }
        stores.get(":name/states/:step") { _, context in
            let source = try source(context, registry)
            guard let step = Int(try parameter("step", context)), let tree = source.tree(afterStep: step) else {
                throw failure(.notFound("The log of \(source.name) holds no such step."))
            }
            return try json(["state": tree])
        }
        stores.post(":name/jump") { request, context in
            let source = try source(context, registry)
            let body = try await request.body.collect(upTo: InspectorGuard.maximumBodySize)
            guard let jump = try? JSONDecoder().decode(Jump.self, from: Data(buffer: body)) else {
                throw failure(.badInput(#"Send {"step": N}: the step whose state to show."#))
            }
            try run { () throws(InspectorError) in try source.jump(toStep: jump.step) }
            return try json(source.summary)
        }
        stores.post(":name/resume") { _, context in
            let source = try source(context, registry)
            try run { () throws(InspectorError) in try source.resume() }
            return try json(source.summary)
        }
        stores.get(":name/export") { _, context in
            let source = try source(context, registry)
            let (lines, dropped) = source.exportedRecording()
            var headers: HTTPFields = [
                .contentType: "application/x-ndjson",
                .contentDisposition: #"attachment; filename="\#(source.name).jsonl""#,
            ]
            headers[.droppedSteps] = String(dropped)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: lines)))
        }
        stores.post(":name/import") { request, context in
            let source = try source(context, registry)
            let lines = Data(buffer: try await request.body.collect(upTo: InspectorGuard.maximumBodySize))
            // Replaying runs the app's reducer over the whole recording: on a thread of its own, not one of the few
            // that serve every request.
            let replay = try await offThePool { () throws(InspectorError) in
                let replay = try source.replay(lines, as: "\(source.name).replay")
                try registry.addReplay(replay)
                return replay
            }
            return try json(replay.summary, status: .created)
        }
        return router
    }

    private struct Jump: Decodable {
        let step: Int
    }

    private static func source(_ context: BasicRequestContext, _ registry: InspectorRegistry) throws -> any InspectedSource {
        let name = try parameter("name", context)
        guard let source = registry.source(named: name) else { throw failure(.notFound("No store is attached as \(name).")) }
        return source
    }

    private static func parameter(_ name: String, _ context: BasicRequestContext) throws -> String {
        guard let value = context.parameters.get(name) else { throw failure(.badInput("The path names no \(name).")) }
        return value.removingPercentEncoding ?? value
    }

    private static func run<Result>(_ body: () throws(InspectorError) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw failure(error)
        }
    }

    /// Runs `body` on a dispatch thread, outside Swift's cooperative pool.
    private static func offThePool<Result: Sendable>(
        _ body: @escaping @Sendable () throws(InspectorError) -> Result
    ) async throws -> Result {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Swift.Result<Result, InspectorError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Swift.Result { () throws(InspectorError) in try body() })
            }
        }
        return try run { () throws(InspectorError) in try outcome.get() }
    }

    static func failure(_ error: InspectorError) -> HTTPError {
        let status: HTTPResponse.Status = switch error.kind {
        case .notFound: .notFound
        case .refused: .conflict
        case .badInput: .badRequest
        }
        return HTTPError(status, message: error.description)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try InspectorJSON.encoder.encode(value)))
        )
    }
}

extension HTTPField.Name {
    /// How many of a store's first steps an export lacks, because the log no longer held them.
    static let droppedSteps = Self("Statehouse-Dropped-Steps")!
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

/// Applies the ``InspectorGuard`` to every request, answers errors as `{"error": "…"}`, and adds the headers that
/// keep the page to itself: no framing, no scripts or styles from elsewhere, no `Referer` carrying the token away.
struct InspectorGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let requestGuard: InspectorGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if let refusal = requestGuard.refusal(
            method: request.method, path: request.uri.path, authority: request.head.authority,
            origin: request.headers[.origin], contentType: request.headers[.contentType],
            contentLength: request.headers[.contentLength].flatMap { Int($0) }
        ) {
            response = Self.error(refusal.status, refusal.message)
        } else {
            do {
                response = try await next(request, context)
            } catch let error as HTTPError {
                response = Self.error(error.status, error.body ?? error.status.reasonPhrase)
            }
        }
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'; base-uri 'none'"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        response.headers[.cacheControl] = response.headers[.cacheControl] ?? "no-store"
        return response
    }

    private static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        (try? InspectorRoutes.json(["error": message], status: status)) ?? Response(status: status)
    }
}
