import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension SyncServer {
    /// `GET`, `PUT` and `DELETE /containers/{key}`, and its feed: see `openapi.json`.
    func addContainerRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.get("containers/:key") { request, context in
            await self.answer {
                let current = try self.container(request, context, writing: false).current
                // With the version's ETag, which tells "nothing stored" from "not hosted" and dates the removal.
                guard let value = current.value else {
                    throw RouteFailure.status(.notFound, "Nothing is stored under this key.", entityTag: current.entityTag)
                }
                return .json(value, entityTag: current.entityTag)
            }
        }
        router.put("containers/:key") { request, context in
            await self.answer {
                let container = try self.container(request, context, writing: true)
                let condition = try Self.condition(of: request)
                return try await Self.answer(container.write(try await self.body(of: request), if: condition))
            }
        }
        router.delete("containers/:key") { request, context in
            await self.answer {
                let container = try self.container(request, context, writing: true)
                return try await Self.answer(container.write(nil, if: try Self.condition(of: request)))
            }
        }
        router.get("containers/:key/events") { request, context in
            await self.answer {
                let container = try self.container(request, context, writing: false)
                let lastSeen = try Self.lastEventID(of: request)
                return .stream(FeedResponse(heartbeat: self.limits.heartbeat) { container.follow(after: lastSeen) }.response())
            }
        }
    }

    /// The container a request names, if its token may use it so.
    private func container<Context: RequestContext>(
        _ request: Request, _ context: Context, writing: Bool
    ) throws(RouteFailure) -> any AnyHostedContainer {
        let grant = try authenticated(request)
        let key = context.parameters.get("key") ?? ""
        guard writing ? grant.mayWrite(container: key) : grant.mayRead(container: key) else {
            throw .status(.forbidden, "This token may not \(writing ? "write" : "read") the container \(key).")
        }
        switch hosting(container: key) {
        case .hosted(let container):
            if let why = container.unavailability { throw .status(.serviceUnavailable, why) }
            return container
        case .unavailable(let why): throw .status(.serviceUnavailable, why)
        case nil: throw .status(.notFound, "No container is hosted as \(key).")
        }
    }

    private static func condition(of request: Request) throws(RouteFailure) -> WriteCondition {
        guard let condition = WriteCondition(ifMatch: request.headers[.ifMatch], ifNoneMatch: request.headers[.ifNoneMatch])
        else {
            throw .status(
                .preconditionRequired,
                "Name the version this write replaces: If-Match with its ETag, or If-None-Match: * when there is none."
            )
        }
        return condition
    }

    private static func answer(_ outcome: ContainerWriteOutcome) throws(RouteFailure) -> Answer {
        switch outcome {
        case .written(let stored):
            return .noContent(entityTag: stored.entityTag)
        case .conditionFailed(let current):
            throw .status(
                .preconditionFailed,
                current.exists
                    ? "The container holds another version (\(current.entityTag)): read it, and write again on it."
                    : "Nothing is stored under this key: write with If-None-Match: *.",
                entityTag: current.entityTag
            )
        }
    }
}

extension ContainerWriteFailure {
    var routeFailure: RouteFailure {
        switch self {
        case .badValue(let message): .status(.badRequest, message)
        case .unavailable(let message): .status(.serviceUnavailable, message)
        }
    }
}
