/// How a scoped store sends its actions, converted, to the store it was scoped from: as a `dispatch` (blocking
/// while it waits its turn) or as a `send` (suspending).
@usableFromInline
struct ParentActions<Action: Sendable>: Sendable {
    @usableFromInline let dispatch: @Sendable (Action) -> Void
    @usableFromInline let send: @Sendable (Action) async -> Void

    @usableFromInline
    init(dispatch: @escaping @Sendable (Action) -> Void, send: @escaping @Sendable (Action) async -> Void) {
        self.dispatch = dispatch
        self.send = send
    }
}
