/// Sees every action before the reducer: to log it, change it, swallow it, or dispatch more.
///
/// ```swift
/// let dropEmptyNames = Middleware<AppState, AppAction> { store, action, next in
///     if case .rename(let name) = action, name.isEmpty { return }   // swallowed
///     next(action)                                                   // or next(someOtherAction) to transform
/// }
/// let store = Store(initialState: AppState(), reducer: reduce, middleware: [logging, dropEmptyNames])
/// ```
///
/// Middleware run in the order given, the first one outermost: it sees each action first, and its `next` leads to
/// the second, and so on to the reducer. Actions a middleware dispatches are queued and go through the whole chain
/// after the current action.
public struct Middleware<State: Sendable, Action: Sendable>: Sendable {
    /// Handles one action: call `next` with it (or another action) to pass it on, or don't to swallow it.
    public typealias Handler = @Sendable (_ store: MiddlewareContext<State, Action>, _ action: Action, _ next: (Action) -> Void) -> Void

    @usableFromInline let handle: Handler
    /// Where the actions this middleware dispatches come from, as recordings and taps note it.
    @usableFromInline let source: ActionSource

    public init(_ handle: @escaping Handler) {
        self.handle = handle
        self.source = .dispatch
    }

    /// A middleware with a name: the actions it dispatches are noted as coming from it (``ActionSource/middleware(_:)``),
    /// which is what a debugging tool such as StatehouseInspector shows.
    public init(name: String, _ handle: @escaping Handler) {
        self.handle = handle
        self.source = .middleware(name)
    }

    /// Folds `middleware` around `reduce` into one function, the first middleware outermost. The function takes
    /// the store, so that it can be made before the store exists, and allocates nothing per action.
    @usableFromInline
    static func chain(
        _ middleware: [Self],
        around reduce: @escaping @Sendable (Store<State, Action>, Action) -> Void
    ) -> @Sendable (Store<State, Action>, Action) -> Void {
        middleware.reversed().reduce(reduce) { next, middleware in
            { store, action in
                middleware.handle(MiddlewareContext(store: store, source: middleware.source), action) { next(store, $0) }
            }
        }
    }
}

/// What a middleware may do with its store: read the state, dispatch actions.
public struct MiddlewareContext<State: Sendable, Action: Sendable>: Sendable {
    private let store: Store<State, Action>
    private let source: ActionSource

    @usableFromInline
    init(store: Store<State, Action>, source: ActionSource) {
        self.store = store
        self.source = source
    }

    /// The store's state now: before the reducer when read before calling `next`, after it when read after.
    public var state: State { store.state }

    /// Dispatches `action` to the store; it runs after the current action, through every middleware.
    public func dispatch(_ action: Action) {
        store.dispatch(action, from: source)
    }
}
