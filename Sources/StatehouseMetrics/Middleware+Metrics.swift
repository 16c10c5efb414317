import Logging
import Metrics
import Statehouse

extension Middleware {
    /// Records every action the store receives in `metrics`, then passes it on unchanged.
    ///
    /// ```swift
    /// let store = Store(
    ///     initialState: AppState(), reducer: reduce,
    ///     middleware: [.metrics(analytics, store: "app")]
    /// )
    /// store.dispatch(.rename("Ann"))
    /// // statehouse_store_actions{store="app", action="rename"} += 1, and "action" store=app action=rename
    /// ```
    ///
    /// Each action increments the counter ``StateMetrics/actionsLabel`` with the dimensions `store` and `action`, and
    /// logs `action` with the same two, plus the action itself only if `actions` allows it. An action is named by
    /// its enum case, without payload (`rename` for `.rename("Ann")`): for a case with a payload that name comes
    /// from `Mirror`, for a case without one from `String(describing:)`, which is the case's name unless the type
    /// customizes its `description`. An action that is not an enum is named by its type.
    ///
    /// Put it first to record actions as dispatched, last to record them as the reducer receives them. Naming the
    /// case takes reflection, a microsecond or two per action; a store without this middleware pays nothing.
    ///
    /// - Parameters:
    ///   - metrics: Where to record.
    ///   - name: The `store` dimension, telling this store's actions from other stores'.
    ///   - actions: Which actions the log events may show; none by default.
    public static func metrics(
        _ metrics: StateMetrics,
        store name: String,
        actions: ValueRedaction<Action> = .redacted
    ) -> Self {
        let counters = ActionCounters(metrics: metrics, store: name)
        return Middleware { _, action, next in
            let caseName = actionCaseName(action)
            counters.counter(for: caseName).increment()
            metrics.log("action", ["store": "\(name)", "action": "\(caseName)"], value: actions.describe(action))
            next(action)
        }
    }
}
