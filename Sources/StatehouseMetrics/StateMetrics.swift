import Logging
import Metrics

/// Where chosen container changes and store actions are recorded: a metrics factory and a logger.
///
/// Nothing is recorded until a container is given to ``Statehouse/StateContainer/recordChanges(to:values:on:)`` or
/// a store gets the middleware ``Statehouse/Middleware/metrics(_:store:actions:)``. Each change or action then
/// increments a swift-metrics counter and writes a swift-log event that names the key or the action's case, and
/// shows the value only where a `ValueRedaction` allows it.
///
/// ```swift
/// let analytics = StateMetrics(logger: Logger(label: "app.analytics"))
/// let token = theme.recordChanges(to: analytics, values: .described)
/// let store = Store(initialState: AppState(), reducer: reduce, middleware: [.metrics(analytics, store: "app")])
/// ```
///
/// The factory and the logger are parameters, not process-wide settings, so that tests (and apps that report to
/// several backends) pass their own instead of bootstrapping `MetricsSystem` or `LoggingSystem`, which a process
/// may do only once.
public struct StateMetrics: Sendable {
    /// The label of the counter of a container's changes; its dimension `key` is the container's key.
    public static let changesLabel = "statehouse_state_changes"
    /// The label of the counter of a store's actions; its dimensions are `store`, the name given to the middleware,
    /// and `action`, the name of the action's case.
    public static let actionsLabel = "statehouse_store_actions"

    /// Makes the counters.
    public let factory: any MetricsFactory
    /// Receives an event for each recorded change or action.
    public let logger: Logger
    /// The level of those events.
    public let level: Logger.Level

    /// Records through `factory` and `logger`.
    ///
    /// - Parameters:
    ///   - factory: Makes the counters; by default the factory `MetricsSystem` has when this is called.
    ///   - logger: Receives the events; its own metadata is kept. By default a logger labelled `Statehouse`, made by
    ///     `LoggingSystem` when this is called.
    ///   - level: The level of the events; `.info` by default, since they are events someone chose to record.
    public init(
        factory: any MetricsFactory = MetricsSystem.factory,
        logger: Logger = Logger(label: "Statehouse"),
        level: Logger.Level = .info
    ) {
        self.factory = factory
        self.logger = logger
        self.level = level
    }

    /// A counter labelled `label` with `dimensions`, made by ``factory``.
    func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        Counter(label: label, dimensions: dimensions, factory: factory)
    }

    /// Logs `message` with `metadata`, plus `value` under the key `value` when the redaction let one through.
    func log(_ message: Logger.Message, _ metadata: Logger.Metadata, value: String?) {
        var metadata = metadata
        if let value { metadata["value"] = "\(value)" }
        logger.log(level: level, message, metadata: metadata)
    }
}
