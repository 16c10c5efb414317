extension Store {
    /// Creates a store that applies actions with a composed ``Reducer``.
    ///
    /// ```swift
    /// let store = Store(initialState: AppState(), reducer: .combine(settings, todos, app))
    /// ```
    @inlinable
    public convenience init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(initialState: initialState, reducer: reducer.reduce, middleware: middleware)
    }

    /// Creates a store whose reducer reaches its dependencies (a clock, UUIDs, dates, services) through
    /// `environment`, passed to it with every action. A test passes its own to a `TestStore`.
    ///
    /// ```swift
    /// let store = Store(initialState: Timer(), environment: TimerEnvironment.live) { state, action, environment in
    ///     …
    ///     return .run { send in
    ///         try await environment.clock.sleep(for: .seconds(1))
    ///         send(.tick)
    ///     }
    /// }
    /// ```
    @inlinable
    public convenience init<Environment: Sendable>(
        initialState: State,
        environment: Environment,
        reducer: @escaping @Sendable (inout State, Action, Environment) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState,
            reducer: Reducer(environment: environment, reducer),
            middleware: middleware
        )
    }
}
