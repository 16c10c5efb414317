import Statehouse
import StatehouseMetrics
import StatehouseTestSupport
import Testing

/// Values stay out of logs and metrics unless a rule lets them in: nested payloads are never shown, a rule that shows
/// one nested case shows nothing else, and described values reach the logs but never a metric's dimensions.
@Suite("Values kept out of logs and metrics")
struct ValueRedactionTests {
    @Test func nestedPayloadsStayOutOfLogsAndMetrics() {
        let fixture = MetricsFixture()
        let secret = "nested-secret-\(UInt64.random(in: 0...UInt64.max))"
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: AppAction) in },
            middleware: [.metrics(fixture.metrics, store: "app")]
        )
        store.dispatch(.profile(.setPassword(old: secret, new: secret)))
        store.dispatch(.login(Credentials(user: secret, password: secret)))
        store.dispatch(.batch([.profile(.rename(secret)), .reset]))
        store.dispatch(.reset)
        #expect(fixture.logs.entries.map { $0.metadata["action"] } == ["profile", "login", "batch", "reset"])
        #expect(fixture.loggedValues == [nil, nil, nil, nil])
        #expect(!fixture.logText.contains { $0.contains(secret) })
        #expect(!fixture.dimensionText.contains { $0.contains(secret) })
    }

    @Test func aRuleThatShowsOneNestedCaseShowsNothingElse() {
        let fixture = MetricsFixture()
        let secret = "rule-secret-\(UInt64.random(in: 0...UInt64.max))"
        let rule = ValueRedaction<AppAction>.loggable { action in
            if case .profile(.select(let tab)) = action { "\(tab)" } else { nil }
        }
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: AppAction) in },
            middleware: [.metrics(fixture.metrics, store: "app", actions: rule)]
        )
        store.dispatch(.profile(.select(tab: .settings)))
        store.dispatch(.profile(.rename(secret)))
        #expect(fixture.loggedValues == ["settings", nil])
        #expect(!fixture.logText.contains { $0.contains(secret) })
    }

    @Test func describedValuesReachLogsButNeverMetrics() {
        let fixture = MetricsFixture()
        let secret = "described-\(UInt64.random(in: 0...UInt64.max))"
        let container = StateContainer("", key: "metrics.described.redaction")
        let token = container.recordChanges(to: fixture.metrics, values: .described)
        let store = fixture.store("described", actions: .described)
        container.modify(secret)
        store.dispatch(.rename(secret))
        #expect(fixture.logText.contains { $0.contains(secret) })
        #expect(!fixture.dimensionText.contains { $0.contains(secret) })
        token.cancel()
    }
}
