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

@Suite("The page")
struct PageTests {
    @Test func thePageSetsNamesAsTextOnlyAndForbidsInlineScripts() async throws {
        try await withAPI { client, tracker in
            try await tracker.perform(.addProject(name: "<script>alert(1)</script>"))
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            let html = String(buffer: page.body)
            #expect(!html.contains("alert(1)"))  // names never travel in the HTML
            let script = String(buffer: try await client.execute(uri: "/app.js", method: .get).body)
            #expect(script.contains("textContent"))
            #expect(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML") && !script.contains("document.write"))
        }
    }
}
