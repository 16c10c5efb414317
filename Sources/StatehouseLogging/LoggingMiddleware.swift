import Logging
import Statehouse

extension Middleware {
    /// Logs every action, and optionally the state after it, through swift-log.
    ///
    /// ```swift
    /// let store = Store(
    ///     initialState: AppState(), reducer: reduce,
    ///     middleware: [.logging(Logger(label: "app.store"))]
    /// )
    /// ```
    ///
    /// Put it first to log actions as dispatched, last to log them as the reducer receives them (after other
    /// middleware transformed or swallowed them).
    ///
    /// - Parameters:
    ///   - logger: Where to log. Its metadata is kept; each entry adds `action` (and `state`).
    ///   - level: The level of the entries; `.debug` by default.
    ///   - includeState: Also log the state after the action, at the same level.
    public static func logging(
        _ logger: Logger,
        level: Logger.Level = .debug,
        includeState: Bool = false
    ) -> Self {
        Middleware { store, action, next in
            logger.log(level: level, "action", metadata: ["action": "\(action)"])
            next(action)
            if includeState {
                logger.log(level: level, "state", metadata: ["action": "\(action)", "state": "\(store.state)"])
            }
        }
    }
}
