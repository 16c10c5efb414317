import Logging
import MetricsTestKit
import Statehouse
import StatehouseMetrics
import StatehouseTestSupport

/// A `StateMetrics` whose counters and log events the test reads: no process-wide bootstrap.
struct MetricsFixture {
    let factory = TestMetrics()
    let logs = CapturingLogHandler()

    var metrics: StateMetrics {
        StateMetrics(factory: factory, logger: Logger(label: "test.metrics") { [logs] _ in logs })
    }

    /// A profile store named `name` whose first middleware records into ``metrics``, followed by `others`.
    func store(
        _ name: String,
        actions: ValueRedaction<ProfileAction> = .redacted,
        before others: [Middleware<Profile, ProfileAction>] = []
    ) -> Store<Profile, ProfileAction> {
        let recording = Middleware<Profile, ProfileAction>.metrics(metrics, store: name, actions: actions)
        return Store(initialState: Profile(), reducer: reduce, middleware: [recording] + others)
    }

    /// The total of the changes counter of the container `key`; 0 when none was made for it.
    func changes(key: String) -> Int64 {
        factory.counterTotal(label: StateMetrics.changesLabel, dimensions: [("key", key)])
    }

    /// The total of the actions counter of the case `action` of the store `store`; 0 when none was made for it.
    func actions(store: String, action: String) -> Int64 {
        factory.counterTotal(label: StateMetrics.actionsLabel, dimensions: [("store", store), ("action", action)])
    }

    /// Every name and value of every dimension of every metric made.
    var dimensionText: [String] {
        let dimensions = factory.counters.flatMap(\.dimensions) + factory.recorders.flatMap(\.dimensions)
            + factory.meters.flatMap(\.dimensions) + factory.timers.flatMap(\.dimensions)
        return dimensions.flatMap { [$0.0, $0.1] }
    }

    /// Every text of every log event: messages, metadata keys and metadata values.
    var logText: [String] {
        logs.entries.flatMap { entry in [entry.message] + entry.metadata.flatMap { [$0.key, $0.value] } }
    }

    /// The log events' values, in order; `nil` where an event showed none.
    var loggedValues: [String?] {
        logs.entries.map { $0.metadata["value"] }
    }
}
