import Logging
import Statehouse

extension Middleware {
    /// Logs every action through swift-log, by its case only unless `actions` lets its value in, and optionally the
    /// state after it.
    ///
    /// ```swift
    /// let store = Store(
    ///     initialState: AppState(), reducer: reduce,
    ///     middleware: [.logging(Logger(label: "app.store"))]
    /// )
    /// store.dispatch(.rename("Ann"))   // "action" action=rename: the payload may be personal, so it stays out
    /// ```
    ///
    /// Each action is logged as `action`, with the metadata `action`: the name of its enum case, without payload
    /// (`rename` for `.rename("Ann")`), or the name of its type if it is not an enum. Actions and state may carry
    /// secrets or personal data, so their values appear, as the metadata `value`, only where a `ValueRedaction`
    /// allows:
    ///
    /// ```swift
    /// .logging(logger, actions: .described)                      // value=rename("Ann")
    /// .logging(logger, actions: .loggable { action in            // only this case shows its payload
    ///     if case .select(let tab) = action { "\(tab)" } else { nil }
    /// })
    /// .logging(logger, state: .loggable { "\($0.items.count) items" })   // and a "state" event after each action
    /// ```
    ///
    /// Put it first to log actions as dispatched, last to log them as the reducer receives them (after other
    /// middleware transformed or swallowed them).
    ///
    /// - Parameters:
    ///   - logger: Where to log. Its metadata is kept; each entry adds `action` (and `value`).
    ///   - level: The level of the entries; `.debug` by default.
    ///   - actions: Which actions the `action` events may show; none by default (their case only).
    ///   - state: If set, a `state` event follows each action, showing the state after it as far as this rule
    ///     allows; `nil` (the default) logs no state.
    public static func logging(
        _ logger: Logger,
        level: Logger.Level = .debug,
        actions: ValueRedaction<Action> = .redacted,
        state: ValueRedaction<State>? = nil
    ) -> Self {
        Middleware { store, action, next in
            let caseName = actionCaseName(action)
            logger.log(level: level, "action", metadata: metadata(caseName, value: actions.describe(action)))
            next(action)
            if let state {
                logger.log(level: level, "state", metadata: metadata(caseName, value: state.describe(store.state)))
            }
        }
    }
}

/// The metadata of an event about the action of case `caseName`, with `value` if the rule let one in.
private func metadata(_ caseName: String, value: String?) -> Logger.Metadata {
    var metadata: Logger.Metadata = ["action": "\(caseName)"]
    if let value { metadata["value"] = "\(value)" }
    return metadata
}
