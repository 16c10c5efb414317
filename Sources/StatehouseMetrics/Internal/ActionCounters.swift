import Metrics
import Statehouse

/// One store's action counters, one per case name, each made the first time its case is seen.
///
/// Kept rather than asked of the factory per action, which would cost the factory's own lookup and lock each time;
/// an action type has few cases, so the table stays small.
final class ActionCounters: Sendable {
    private let metrics: StateMetrics
    private let store: String
    private let counters = Locked<[String: Counter]>([:])

    init(metrics: StateMetrics, store: String) {
        self.metrics = metrics
        self.store = store
    }

    /// The counter of the case named `caseName`.
    func counter(for caseName: String) -> Counter {
        counters.withLock { counters in
            if let counter = counters[caseName] { return counter }
            let made = metrics.counter(StateMetrics.actionsLabel, [("store", store), ("action", caseName)])
            counters[caseName] = made
            return made
        }
    }
}
