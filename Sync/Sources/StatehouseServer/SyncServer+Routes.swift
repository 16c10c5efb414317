import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StatehouseSyncWire

extension SyncServer {
    /// Adds the sync routes (see `openapi.json`) to `router`, to serve them beside an app's own: a router, or a
    /// group of one (`router.group("sync")` serves them under `/sync/`).
    public func addRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: OpenAPIDocument.bytes))
            )
        }
        router.get("stores/:name") { request, context in
            await self.answer {
                let (store, grant) = try self.store(request, context, writing: false)
                return .json(try store.snapshot(for: SyncCaller(client: try Self.client(of: request), token: grant.name)))
            }
        }
        router.post("stores/:name/actions") { request, context in
            await self.answer {
                let (store, grant) = try self.store(request, context, writing: true)
                let body = try await self.body(of: request)
                return .json(try Self.encode(try await store.push(body, token: grant.name)))
            }
        }
        router.get("stores/:name/events") { request, context in
            await self.answer {
                let (store, grant) = try self.store(request, context, writing: false)
                let caller = SyncCaller(client: try Self.client(of: request), token: grant.name)
                let lastSeen = try Self.lastEventID(of: request)
                let feed = FeedResponse(heartbeat: self.limits.heartbeat) { store.follow(caller, after: lastSeen) }
                return .stream(feed.response())
            }
        }
        addContainerRoutes(to: router)
    }

    /// A server on its own: the sync routes on `host:port`, loopback by default so that nothing outside this machine
    /// reaches it until you say so (behind a TLS-terminating proxy, say; see the package's README).
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port to listen on; 0 lets the system choose one.
    ///   - onListening: Called with the port once the server listens (the one the system chose, for port 0).
    public func application(
        host: String = "127.0.0.1", port: Int = 8090, onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router()
        addRoutes(to: router)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "statehouse-sync"),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }
        )
    }

    /// The store a request names, if its token may use it so.
    private func store<Context: RequestContext>(
        _ request: Request, _ context: Context, writing: Bool
    ) throws(RouteFailure) -> (any AnyHostedStore, SyncGrant) {
        let grant = try authenticated(request)
        let name = context.parameters.get("name") ?? ""
        guard writing ? grant.mayWrite(store: name) : grant.mayRead(store: name) else {
            throw .status(.forbidden, "This token may not \(writing ? "push to" : "read") the store \(name).")
        }
        switch hosting(store: name) {
        case .hosted(let store):
            if let why = store.unavailability { throw .status(.serviceUnavailable, why) }
            return (store, grant)
        case .unavailable(let why): throw .status(.serviceUnavailable, why)
        case nil: throw .status(.notFound, "No store is hosted as \(name).")
        }
    }

    func authenticated(_ request: Request) throws(RouteFailure) -> SyncGrant {
        let header = request.headers[.authorization] ?? ""
        let prefix = "Bearer "
        guard header.hasPrefix(prefix), let grant = tokens.grant(for: String(header.dropFirst(prefix.count))) else {
            throw .unauthorized
        }
        return grant
    }

    private static func client(of request: Request) throws(RouteFailure) -> String {
        let client = request.uri.queryParameters.get("client") ?? ""
        guard ClientID.isValid(client) else {
            throw .status(.badRequest, "Name the client with ?client=: 1 to 64 characters of A-Z a-z 0-9 . _ -.")
        }
        return client
    }

    /// The cursor a feed resumes after: the `Last-Event-ID` header (what an `EventSource` sends when it reconnects),
    /// else `?since=`; `nil` for a new feed.
    static func lastEventID(of request: Request) throws(RouteFailure) -> Int64? {
        let since = request.uri.queryParameters.get("since").map { String($0) }
        guard let text = request.headers[HTTPField.Name("Last-Event-ID")!] ?? since else { return nil }
        guard let cursor = Int64(text), cursor >= 0 else {
            throw .status(.badRequest, "Last-Event-ID is a cursor: a whole number, 0 or more.")
        }
        return cursor
    }

    private static func encode(_ value: some Encodable) throws(RouteFailure) -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw .status(.internalServerError, "The answer could not be encoded: \(error)")
        }
    }

    func body(of request: Request) async throws(RouteFailure) -> Data {
        do {
            return Data(try await request.body.collect(upTo: limits.maximumBody).readableBytesView)
        } catch {
            throw .status(.contentTooLarge, "A request body has at most \(limits.maximumBody) bytes.")
        }
    }

    /// Runs a route's work; its failures become their 4xx or 5xx answers.
    func answer(_ work: () async throws -> Answer) async -> Response {
        do {
            return try await work().response
        } catch let failure as RouteFailure {
            return failure.response
        } catch let failure as PushFailure {
            return failure.routeFailure.response
        } catch let failure as ContainerWriteFailure {
            return failure.routeFailure.response
        } catch {
            return RouteFailure.status(.internalServerError, "\(error)").response
        }
    }
}

/// What a route answers when it succeeds.
enum Answer {
    case json(Data, entityTag: String? = nil)
    /// 204, with the `ETag` of what the request left.
    case noContent(entityTag: String)
    case stream(Response)

    var response: Response {
        switch self {
        case .json(let data, let entityTag):
            var headers: HTTPFields = [.contentType: "application/json"]
            headers[.eTag] = entityTag
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        case .noContent(let entityTag):
            return Response(status: .noContent, headers: [.eTag: entityTag])
        case .stream(let response):
            return response
        }
    }
}

/// Why a route answers with a 4xx or 5xx, always with an ``ErrorAnswer`` body.
enum RouteFailure: Error {
    case unauthorized
    /// With the `ETag` of a container's version the answer is about, if any.
    case status(HTTPResponse.Status, String, handledThrough: Int64? = nil, entityTag: String? = nil)

    var response: Response {
        switch self {
        case .unauthorized:
            var response = Self.error(.unauthorized, ErrorAnswer(error: "Send a token: Authorization: Bearer …"))
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        case .status(let status, let message, let handledThrough, let entityTag):
            var response = Self.error(status, ErrorAnswer(error: message, handledThrough: handledThrough))
            response.headers[.eTag] = entityTag
            return response
        }
    }

    private static func error(_ status: HTTPResponse.Status, _ body: ErrorAnswer) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: (try? JSONEncoder().encode(body)) ?? Data()))
        )
    }
}

extension PushFailure {
    var routeFailure: RouteFailure {
        switch self {
        case .badRequest(let message): .status(.badRequest, message)
        case .forbidden(let message): .status(.forbidden, message)
        case .gap(let handled):
            .status(
                .conflict, "The batch starts past the next action the server expects (\(handled + 1)).",
                handledThrough: handled
            )
        case .replayDiffers(let seq, let handled):
            .status(
                .conflict, """
                    Action \(seq) differs from the one the server handled under that number: was the outbox restored \
                    from an older copy, or does another app use this client name?
                    """,
                handledThrough: handled
            )
        case .tooLarge(let message): .status(.contentTooLarge, message)
        case .tooManyClients(let message): .status(.tooManyRequests, message)
        case .unavailable(let message): .status(.serviceUnavailable, message)
        }
    }
}
