import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseInspector

/// The page's feed: every event once, in id order; resumed by `Last-Event-ID` without a gap or a repeat; a page that
/// stops reading is cut off and resumes; containers show their listeners and where their last change came from.
@Suite("The inspector's live feed")
struct InspectorFeedTests {
    /// The ids of the `event` events in `text`, a response in chunks (whose `\r\n`s are one Character in Swift, so
    /// the text is read as scalars).
    private func ids(in text: String, event: String) -> [Int] {
        let scalars = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\r" }))
        return scalars.matches(of: /id: (\d+)\nevent: (\w+)\n/).compactMap { match in
            match.output.2 == event ? Int(match.output.1) : nil
        }
    }

    private func request(_ inspector: Inspector, header: String) -> String {
        "GET /\(inspector.token)/api/events\(header.isEmpty ? "?since=0" : "") HTTP/1.1\r\nHost: 127.0.0.1:\(inspector.port)\r\n\(header)\r\n"
    }

    @Test func aFeedResumedByLastEventIDMissesNothingAndRepeatsNothing() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            for _ in 0..<30 { store.dispatch(.count) }
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 30 })
            let ids = ids(in:event:)
            let firstText = try await exchange(port: inspector.port, request(inspector, header: ""), until: { ids($0, "entry").count >= 30 })
            let firstIDs = ids(firstText, "entry")
            try #require(firstIDs.count == 30, "\(firstText)")
            #expect(firstIDs.count == 30 && firstIDs == firstIDs.sorted())
            let cut = firstIDs[11]
            for _ in 0..<10 { store.dispatch(.count) }
            let resumedIDs = ids(
                try await exchange(port: inspector.port, request(inspector, header: "Last-Event-ID: \(cut)\r\n"), until: { ids($0, "entry").count >= 28 }),
                "entry"
            )
            #expect(resumedIDs == Array(firstIDs[12...]) + Array(resumedIDs.suffix(10)))
            #expect(Set(resumedIDs).count == resumedIDs.count && resumedIDs == resumedIDs.sorted())
        }
    }

    @Test func aPageThatStopsReadingIsCutOffAndDispatchGoesOn() async throws {
        try await withInspector(capacity: 1_000, bufferPerPage: 100) { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            let stalled = try RawConnection(port: inspector.port, receiveBuffer: 4_096)
            stalled.send(request(inspector, header: ""))
            #expect(await eventually { inspector.registry.hub.followerCount == 1 })
            // Until the sockets' buffers and then the page's own are full: dispatching goes on meanwhile. How many
            // entries that takes depends on how fast the worker publishes (a worker behind drops what its intake
            // cannot hold), so the dispatches go on until the page is cut off, not for a fixed count.
            let deadline = ContinuousClock.now + .seconds(300)
            var dispatched = 0
            while inspector.registry.hub.followerCount == 1, ContinuousClock.now < deadline {
                for _ in 0..<1_000 { store.dispatch(.count) }
                dispatched += 1_000
                await Task.yield()
            }
            #expect(inspector.registry.hub.followerCount == 0, "still following after \(dispatched) dispatches")
            #expect(store.state.count == dispatched)
        }
    }

    @Test func aContainersRowShowsItsListenersAndItsLastChange() async throws {
        try await withInspector { inspector async throws in
            let theme = StateContainer("light", key: "inspector.theme")
            let token = theme.observe { _ in }
            inspector.attach(theme)
            theme.modify("dark")
            let row: @Sendable () async -> [String: Any]? = {
                let overview = try? await inspector.request("api/overview").json() as? [String: Any]
                return (overview?["containers"] as? [[String: Any]])?.first { $0["key"] as? String == "inspector.theme" }
            }
            #expect(await eventuallyAsync { await row()?["value"] as? String == "dark" })
            let shown = await row()
            #expect(shown?["listeners"] as? Int == 1)
            #expect(shown?["fromStorage"] as? Bool == false)
            #expect(shown?["lastChange"] is String)
            token.cancel()
        }
    }
}
