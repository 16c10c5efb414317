/// A reducer as a value: applies an action to the state and says what to do next, and composes with others.
///
/// ```swift
/// let app = Reducer<AppState, AppAction>.combine(
///     .scope(state: \.settings, action: ActionCase(AppAction.settings), child: settingsReducer),
///     Reducer { state, action in
///         if case .reset = action { state = AppState() }
///         return .none
///     }
/// )
/// let store = Store(initialState: AppState(), reducer: app)
/// ```
///
/// A screen's reducer knows only its own state and actions; the app's runs it on a slice of its state
/// (``scope(state:action:child:)``), on optional state (``ifLet(_:action:then:)-561ln``) and on each element
/// of a collection (``forEach(_:action:element:)``), with the child's effects turned into the parent's actions.
/// See <doc:TheStore>.
public struct Reducer<State, Action: Sendable>: Sendable {
    /// Applies `action` to the state; returns the effect to run.
    public let reduce: @Sendable (inout State, Action) -> Effect<Action>

    /// A reducer that may return an ``Effect``.
    ///
    /// Disfavored so that a closure returning nothing picks the `Void` initializer (see ``Store``'s).
    @_disfavoredOverload
    public init(_ reduce: @escaping @Sendable (inout State, Action) -> Effect<Action>) {
        self.reduce = reduce
    }

    /// A reducer that only changes the state.
    public init(_ reduce: @escaping @Sendable (inout State, Action) -> Void) {
        self.reduce = { state, action in
            reduce(&state, action)
            return .none
        }
    }

    /// A reducer that reaches its dependencies (a clock, UUIDs, dates, services) through `environment`, passed to
    /// it with every action: the app passes the live ones, a test its own.
    ///
    /// ```swift
    /// struct TimerEnvironment: Sendable { var clock: any Clock<Duration> }
    /// let timer = Reducer(environment: TimerEnvironment(clock: ContinuousClock())) { state, action, environment in … }
    /// ```
    public init<Environment: Sendable>(
        environment: Environment,
        _ reduce: @escaping @Sendable (inout State, Action, Environment) -> Effect<Action>
    ) {
        self.reduce = { state, action in reduce(&state, action, environment) }
    }

    /// Runs every reducer in order on the same state, and their effects together.
    public static func combine(_ reducers: Self...) -> Self {
        combine(reducers)
    }

    /// Runs every reducer in order on the same state, and their effects together.
    public static func combine(_ reducers: [Self]) -> Self {
        Self { state, action in
            .merge(reducers.map { $0.reduce(&state, action) })
        }
    }

    /// This reducer, then `other`, on the same state.
    public func combined(with other: Self) -> Self {
        .combine(self, other)
    }
}
