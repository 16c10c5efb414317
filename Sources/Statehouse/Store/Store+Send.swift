extension Store {
    /// Sends `action` to the reducer, through the middleware, and suspends, without blocking a thread, until it is
    /// applied: the `async` form of ``dispatch(_:)``, for tasks and effects.
    ///
    /// When it returns, the action — and what applying it sent synchronously — has been applied and the
    /// subscribers told, as after a ``dispatch(_:)``. On an idle store the task does the work at once; on a busy one
    /// it is suspended until the store's worker — a caller blocked in `dispatch`, or a background thread, never a
    /// thread of the cooperative pool that another task may need — has done it. Cancelling the task does not
    /// withdraw the action: once sent, it is applied.
    public func send(_ action: Action) async {
        if case .scope(let upstream) = role { return await upstream.actions.send(action) }
        let entered = enter({ route(action) }, orQueue: .action(action), waits: .suspending)
        if case .suspend(let caller) = entered { await caller.waitAsync() }
    }
}
