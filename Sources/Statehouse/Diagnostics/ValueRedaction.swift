/// Whether a log event may show a value, and how: values are left out unless a rule says otherwise.
///
/// Keys, case names and counts are always recorded; the value of a container, an action's payload or a store's
/// state appears in a log event only when its rule returns a string for it. StatehouseLogging's
/// `Middleware.logging(_:level:actions:state:)` and StatehouseMetrics take one; metrics never carry values,
/// whatever the rule.
///
/// ```swift
/// let store = Store(initialState: AppState(), reducer: reduce, middleware: [
///     .logging(logger),                                              // action=rename: the case only, the default
///     .logging(logger, actions: .described),                         // and value=rename("Ann")
/// ])
/// let tokens = [
///     password.recordChanges(to: analytics),                         // the key only: the default
///     theme.recordChanges(to: analytics, values: .described),        // and value=red
///     apiToken.recordChanges(to: analytics, values: .loggable { $0 == nil ? "none" : "set" }),
/// ]
/// let middleware = Middleware<AppState, AppAction>.metrics(analytics, store: "app", actions: .loggable { action in
///     if case .select(let tab) = action { "\(tab)" } else { nil }   // only this case shows its payload
/// })
/// ```
public struct ValueRedaction<Value>: Sendable {
    /// What a log event shows of `value`; `nil` shows nothing.
    package let describe: @Sendable (Value) -> String?

    /// What the rule shows of `value`; `nil` shows nothing.
    public func text(for value: Value) -> String? {
        describe(value)
    }

    /// Shows no value: the default.
    public static var redacted: Self {
        Self { _ in nil }
    }

    /// Shows each value as `String(describing:)` writes it, for values that are not secret or personal.
    public static var described: Self {
        Self { String(describing: $0) }
    }

    /// Shows what `describe` makes of each value; where it returns `nil`, nothing.
    ///
    /// - Parameter describe: Makes a string safe to log from a value, or returns `nil` to leave the value out. It
    ///   runs wherever the change is delivered or the action dispatched, so it must be quick.
    public static func loggable(_ describe: @escaping @Sendable (Value) -> String?) -> Self {
        Self(describe: describe)
    }
}
