import Foundation
import Testing
import TimeTrackerTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `serve --inspect`: the Statehouse Inspector's page on the tracker's store, where a change another process makes
/// shows as the actions that brought it, with what they changed.
@Suite("timetrack serve --inspect", .serialized)
struct InspectCommandTests {
    @Test func anotherProcessesChangeShowsInTheInspectorWithItsDiff() async throws {
        let database = TemporaryDatabase()
        let (server, _) = try await TimetrackProcess.serve(["--inspect", "--db", database.path])
        defer {
            server.signal(SIGINT)
            _ = server.waitForExit()
        }
        let printed = #/the Statehouse Inspector shows the tracker's store at (http://127\.0\.0\.1:\d+/[0-9a-f]+/)/#
        #expect(await eventually { server.output.contains(printed) })
        let match = try #require(server.output.firstMatch(of: printed))
        let inspector = try #require(URL(string: String(match.1)))
        #expect(try TimetrackProcess.run(["add", "Reading", "--db", database.path]).status == 0)
        let log = URL(string: "api/stores/timetrack", relativeTo: inspector)!
        let shown = await eventuallyAsync {
            guard let (data, _) = try? await URLSession.shared.data(from: log) else { return false }
            return String(decoding: data, as: UTF8.self).contains(#""path":"projects[0]""#)
                && String(decoding: data, as: UTF8.self).contains(#""name":"Reading""#)
        }
        #expect(shown)
        let (page, response) = try await URLSession.shared.data(from: URL(string: "api/overview", relativeTo: URL(string: "http://127.0.0.1:\(inspector.port!)/")!)!)
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
        #expect(!String(decoding: page, as: UTF8.self).contains("timetrack"))
    }
}
