import Foundation
import Logging
import MetricsTestKit
import Statehouse
import StatehouseMetrics
import StatehouseTestSupport
import Testing

/// The `StatehouseMetrics` article's code blocks stand here, line for line, where they are compiled and run.
@Suite("StatehouseMetrics article")
struct ArticleExamplesTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyCodeBlockOfTheArticleIsCompiledHere() throws {
        let article = Self.repository
            .appendingPathComponent("Sources/StatehouseMetrics/StatehouseMetrics.docc/StatehouseMetrics.md")
        let blocks = ArticleCode.blocks(in: try String(contentsOf: article, encoding: .utf8))
        let here = ArticleCode.normalized(try String(contentsOfFile: #filePath, encoding: .utf8))
        #expect(blocks.count == 2)
        for block in blocks {
            #expect(here.contains(ArticleCode.normalized(block)), "a code block is not in this file:\n\(block)")
        }
    }

    @Test func theExamplesRecordWhatTheirCommentsSay() {
        let factory = TestMetrics()
        let handler = CapturingLogHandler()
        let logger = Logger(label: "app.analytics") { _ in handler }

        // StateMetrics() records through MetricsSystem's factory and a logger labelled "Statehouse".
        let analytics = StateMetrics(factory: factory, logger: logger)

        let theme = StateContainer("blue", key: "themeColor")
        let password = StateContainer("", key: "password")
        var tokens = Set<SubscriptionToken>()
        theme.recordChanges(to: analytics, values: .described).store(in: &tokens)
        password.recordChanges(to: analytics).store(in: &tokens)   // counted and logged, the value never shown

        let store = Store(
            initialState: Profile(), reducer: reduce,
            middleware: [.metrics(analytics, store: "profile")]
        )
        theme.modify("red")            // "state changed" key=themeColor value=red
        password.modify("hunter2")     // "state changed" key=password
        store.dispatch(.rename("Ann")) // "action" store=profile action=rename

        let apiToken = StateContainer<String?>(nil, key: "apiToken")
        apiToken.recordChanges(to: analytics, values: .loggable { $0 == nil ? "none" : "set" }).store(in: &tokens)

        let tabs = Middleware<Profile, ProfileAction>.metrics(analytics, store: "tabs", actions: .loggable { action in
            if case .select(let tab) = action { "\(tab)" } else { nil }   // only this case shows its payload
        })

        apiToken.modify("abc")
        let tabStore = Store(initialState: Profile(), reducer: reduce, middleware: [tabs])
        tabStore.dispatch(.select(tab: .settings))
        tabStore.dispatch(.rename("Ann"))
        #expect(handler.entries.map(\.metadata) == [
            ["key": "themeColor", "value": "red"],
            ["key": "password"],
            ["store": "profile", "action": "rename"],
            ["key": "apiToken", "value": "set"],
            ["store": "tabs", "action": "select", "value": "settings"],
            ["store": "tabs", "action": "rename"],
        ])
        let messages = ["state changed", "state changed", "action", "state changed", "action", "action"]
        #expect(handler.entries.map(\.message) == messages)
        #expect(factory.counterTotal(label: StateMetrics.changesLabel) == 3)
        #expect(factory.counterTotal(label: StateMetrics.actionsLabel) == 3)
    }
}
