import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseInspector

/// Only the page the inspector printed gets in: the token on every path, the server's own `Host`, its own `Origin`,
/// and changes only with a body another site cannot send without asking.
@Suite("Who may use the inspector")
struct InspectorAccessTests {
    /// A raw request, with the headers an attacker chooses; the status line's code.
    private func status(_ inspector: Inspector, _ request: String) async throws -> Int {
        let answer = try await exchange(port: inspector.port, request, until: { $0.contains("\r\n\r\n") })
        return Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    @Test func aRequestWithoutTheTokenIsRefusedThePageIncluded() async throws {
        try await withInspector { inspector async throws in
            let host = "Host: 127.0.0.1:\(inspector.port)\r\n"
            #expect(try await status(inspector, "GET /\(inspector.token)/ HTTP/1.1\r\n\(host)\r\n") == 200)
            for path in ["/", "/api/overview", "/inspector.js", "/x\(inspector.token)/", "/\(inspector.token.dropLast())/api/overview"] {
                #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\n\(host)\r\n") == 401, "\(path)")
            }
        }
    }

    @Test func aForeignHostOrOriginIsRefused() async throws {
        try await withInspector { inspector async throws in
            let path = "/\(inspector.token)/api/overview"
            #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\nHost: attacker.example:\(inspector.port)\r\n\r\n") == 421)
            #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\nHost: localhost:\(inspector.port)\r\n\r\n") == 200)
            let host = "Host: 127.0.0.1:\(inspector.port)\r\n"
            #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\n\(host)Origin: http://attacker.example\r\n\r\n") == 403)
            #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\n\(host)Origin: http://127.0.0.1:\(inspector.port)\r\n\r\n") == 200)
        }
    }

    @Test func aRequestWithoutAHostIsRefusedAndTheHostsCaseDoesNotMatter() async throws {
        try await withInspector { inspector async throws in
            let path = "/\(inspector.token)/api/overview"
            #expect(try await status(inspector, "GET \(path) HTTP/1.0\r\n\r\n") == 400)
            let shouting = "Host: LOCALHOST:\(inspector.port)\r\nOrigin: http://localhost:\(inspector.port)\r\n"
            #expect(try await status(inspector, "GET \(path) HTTP/1.1\r\n\(shouting)\r\n") == 200)
            #expect(try await status(inspector, "HEAD \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(inspector.port)\r\n\r\n") == 200)
        }
    }

    @Test func aChangeNeedsABodyAnotherSiteCannotSendAndASizeItCanHold() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes", allowsJumps: true)
            let path = "/\(inspector.token)/api/stores/notes/resume"
            let host = "Host: 127.0.0.1:\(inspector.port)\r\n"
            #expect(try await status(inspector, "POST \(path) HTTP/1.1\r\n\(host)Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}") == 415)
            #expect(try await status(inspector, "POST \(path) HTTP/1.1\r\n\(host)Content-Length: 2\r\n\r\n{}") == 415)
            let huge = InspectorGuard.maximumBodySize + 1
            #expect(try await status(inspector, "POST \(path) HTTP/1.1\r\n\(host)Content-Type: application/json\r\nContent-Length: \(huge)\r\n\r\n") == 413)
            #expect(try await status(inspector, "POST \(path) HTTP/1.1\r\n\(host)Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}") == 409)
        }
    }

    @Test func everyAnswerKeepsThePageToItself() async throws {
        try await withInspector { inspector async throws in
            for path in ["", "inspector.js", "api/overview", "api/stores/none"] {
                let answer = try await inspector.request(path)
                #expect(answer.headers["x-frame-options"] == "DENY")
                #expect(answer.headers["referrer-policy"] == "no-referrer")
                #expect(answer.headers["content-security-policy"]?.contains("default-src 'self'") == true)
                #expect(answer.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
            }
        }
    }

    @Test func itListensBeyondLoopbackOnlyWhenToldByWhichNames() async throws {
        await #expect(throws: InspectorStartError.beyondLoopback("0.0.0.0")) { try await Inspector.start(host: "0.0.0.0") }
        await #expect(throws: InspectorStartError.capacity) { try await Inspector.start(capacity: 0) }
        let inspector = try await Inspector.start(host: "0.0.0.0", allowedHosts: ["inspector.test"])
        #expect(inspector.url.host == "inspector.test")
        let answer = try await exchange(
            port: inspector.port, "GET /\(inspector.token)/api/overview HTTP/1.1\r\nHost: inspector.test:\(inspector.port)\r\n\r\n",
            until: { $0.contains("\r\n\r\n") }
        )
        #expect(answer.hasPrefix("HTTP/1.1 200"))
        await inspector.stop()
    }

    @Test func theTokenIsLongAndDiffersFromOneStartToTheNext() async throws {
        let first = try await Inspector.start()
        let second = try await Inspector.start()
        #expect(first.token.count == 48 && first.token != second.token)
        #expect(first.token.allSatisfy { $0.isHexDigit })
        await first.stop()
        await second.stop()
    }
}
