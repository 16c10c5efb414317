import Foundation
import Hummingbird
import NIOCore

/// JSON responses, built by hand so that errors have the shape the API promises: `{"error": "…"}`.
enum APIResponse {
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        // Encoding a dictionary of strings cannot fail.
        (try? json(["error": message], status: status)) ?? Response(status: status)
    }
}
