import Logging
import Metrics
import Statehouse

extension StateContainer {
    /// Records this container's changes in `metrics` until the returned token is cancelled or released.
    ///
    /// ```swift
    /// let token = theme.recordChanges(to: analytics, values: .described)
    /// theme.modify("red")
    /// // statehouse_state_changes{key="themeColor"} += 1, and "state changed" key=themeColor value=red
    /// ```
    ///
    /// Every change increments the counter ``StateMetrics/changesLabel`` with the dimension `key`: a backend derives
    /// the rate of changes per key from it. The count is exact even when many threads change the container at once,
    /// although a listener is then called once for several changes (`Delivery`): each call counts the changes
    /// since the previous one (`StateContainer.changeCount`). Each call also logs `state changed` with the key, and
    /// the value only if `values` allows it; so under contention one event may stand for several changes, and it
    /// shows the latest value.
    ///
    /// Changes are counted on the thread that delivers them synchronously, whatever `delivery` says: `delivery`
    /// moves only the log events. So a count never waits on a queue, and the changes made just before the container
    /// is released are counted too (a queued call would find the container gone, and its count with it).
    ///
    /// This is an ordinary listener: a container without one records nothing and pays nothing.
    ///
    /// - Parameters:
    ///   - metrics: Where to record.
    ///   - values: Which values the log events may show; none by default.
    ///   - delivery: Where the log events are written; on the changing thread by default. A queue keeps slow log
    ///     handlers off the threads that change the container.
    /// - Returns: The token that keeps the recording going.
    public func recordChanges(
        to metrics: StateMetrics,
        values: ValueRedaction<Value> = .redacted,
        on delivery: Delivery = .synchronous
    ) -> SubscriptionToken {
        let counter = metrics.counter(StateMetrics.changesLabel, [("key", key)])
        // Read before registering: a change racing with this call may be counted although no call hears of it.
        let tally = ChangeTally(from: changeCount)
        let metadata: Logger.Metadata = ["key": "\(key)"]
        let log = { @Sendable (value: Value) in metrics.log("state changed", metadata, value: values.describe(value)) }
        // Weakly, since the container keeps its listeners: it would never be released otherwise. A synchronous call
        // always finds it: the thread delivering holds it.
        let counting = observe { [weak self] value in
            guard let self else { return }
            let changes = tally.changes(upTo: changeCount)
            if changes > 0 { counter.increment(by: Int64(changes)) }
            if case .synchronous = delivery { log(value) }
        }
        if case .synchronous = delivery { return counting }
        return .combining([counting, observe(on: delivery, log)])
    }
}
