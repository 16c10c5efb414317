import MetricsTestKit
import Statehouse
import StatehouseMetrics
import StatehouseTestSupport
import Testing

@Suite("Recording a store's actions")
struct StoreMetricsTests {
    @Test func countsActionsPerCaseAndStore() {
        let fixture = MetricsFixture()
        let profile = fixture.store("profile")
        let other = fixture.store("other")
        profile.dispatch(.visit)
        profile.dispatch(.visit)
        profile.dispatch(.rename("Ann"))
        profile.dispatch(.select(tab: .settings))
        profile.dispatch(.setPassword(old: "a", new: "b"))
        other.dispatch(.visit)
        #expect(fixture.actions(store: "profile", action: "visit") == 2)
        #expect(fixture.actions(store: "profile", action: "rename") == 1)
        #expect(fixture.actions(store: "profile", action: "select") == 1)
        #expect(fixture.actions(store: "profile", action: "setPassword") == 1)
        #expect(fixture.actions(store: "other", action: "visit") == 1)
        #expect(fixture.factory.counters(label: StateMetrics.actionsLabel).count == 5)
        let events = fixture.logs.entries.map { [$0.message, $0.metadata["store"], $0.metadata["action"]] }
        #expect(events == [
            ["action", "profile", "visit"], ["action", "profile", "visit"], ["action", "profile", "rename"],
            ["action", "profile", "select"], ["action", "profile", "setPassword"], ["action", "other", "visit"],
        ])
    }

    @Test func logsNoPayloadByDefault() {
        let fixture = MetricsFixture()
        let store = fixture.store("profile")
        store.dispatch(.rename("Ann-secret"))
        store.dispatch(.setPassword(old: "old-secret", new: "new-secret"))
        #expect(fixture.loggedValues == [nil, nil])
        #expect(!fixture.logText.contains { $0.contains("secret") })
        #expect(!fixture.dimensionText.contains { $0.contains("secret") })
    }

    @Test func namesCasesByTheirNameEvenWhenTheDescriptionShowsThePayload() {
        let fixture = MetricsFixture()
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: TalkativeAction) in },
            middleware: [.metrics(fixture.metrics, store: "login")]
        )
        store.dispatch(.signIn(password: "p4ss-secret"))
        store.dispatch(.signOut)
        #expect(fixture.actions(store: "login", action: "signIn") == 1)
        // A case without a payload is named by its description, here customized; it has nothing secret to show.
        #expect(fixture.actions(store: "login", action: "signing out") == 1)
        #expect(!fixture.logText.contains { $0.contains("p4ss") })
        #expect(!fixture.dimensionText.contains { $0.contains("p4ss") })
    }

    @Test func namesAnActionThatIsNotAnEnumByItsType() {
        let fixture = MetricsFixture()
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: Ping) in },
            middleware: [.metrics(fixture.metrics, store: "pings")]
        )
        store.dispatch(Ping(secret: "ping-secret"))
        #expect(fixture.actions(store: "pings", action: "Ping") == 1)
        #expect(!fixture.logText.contains { $0.contains("ping-secret") })
        #expect(!fixture.dimensionText.contains { $0.contains("ping-secret") })
    }

    @Test func logsTheActionsTheRuleAllowsOnly() {
        let fixture = MetricsFixture()
        let rule = ValueRedaction<ProfileAction>.loggable { action in
            if case .select(let tab) = action { "\(tab)" } else { nil }
        }
        let store = fixture.store("profile", actions: rule)
        store.dispatch(.select(tab: .settings))
        store.dispatch(.setPassword(old: "old-secret", new: "new-secret"))
        #expect(fixture.loggedValues == ["settings", nil])
        #expect(!fixture.logText.contains { $0.contains("secret") })
    }

    @Test func describedActionsAreLoggedWhole() {
        let fixture = MetricsFixture()
        let store = fixture.store("profile", actions: .described)
        store.dispatch(.rename("Ann"))
        #expect(fixture.loggedValues == [#"rename("Ann")"#])
        #expect(fixture.actions(store: "profile", action: "rename") == 1)
    }

    @Test func passesEveryActionOnUnchangedAndInOrder() {
        let fixture = MetricsFixture()
        let received = Recorder<ProfileAction>()
        let after = Middleware<Profile, ProfileAction> { _, action, next in
            received.append(action)
            next(action)
        }
        let actions: [ProfileAction] = [
            .rename("Ann"), .visit, .select(tab: .settings), .setPassword(old: "a", new: "b"), .visit,
        ]
        let recorded = fixture.store("profile", before: [after])
        let plain = Store(initialState: Profile(), reducer: reduce)
        for action in actions {
            recorded.dispatch(action)
            plain.dispatch(action)
        }
        #expect(received.elements == actions)
        #expect(recorded.state == plain.state)
        #expect(recorded.state == Profile(name: "Ann", visits: 2, tab: .settings))
    }

    @Test func recordsActionsMiddlewareDispatchesAsTheyReachIt() {
        let fixture = MetricsFixture()
        let visitOnRename = Middleware<Profile, ProfileAction> { store, action, next in
            next(action)
            if case .rename = action { store.dispatch(.visit) }
        }
        let store = Store(
            initialState: Profile(), reducer: reduce,
            middleware: [visitOnRename, .metrics(fixture.metrics, store: "profile")]
        )
        store.dispatch(.rename("Ann"))
        #expect(fixture.logs.entries.map { $0.metadata["action"] } == ["rename", "visit"])
        #expect(store.state.visits == 1)
    }
}
