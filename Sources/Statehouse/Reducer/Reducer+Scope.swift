extension Reducer {
    /// Runs `child` on the part of the state at `toChildState` for the actions of one case, and turns its effects'
    /// actions back into that case.
    ///
    /// ```swift
    /// .scope(state: \.settings, action: ActionCase(AppAction.settings), child: settingsReducer)
    /// ```
    ///
    /// Other actions pass it by untouched, with no effect.
    ///
    /// One child feature scoped to several slices keeps the children it presents with
    /// ``ifLet(_:action:then:)-561ln`` apart: dismissing one in this slice cancels none elsewhere. The cancellation
    /// ids the child itself gives its effects are kept as they are, so the parent can cancel them, and are the same
    /// in every slice.
    public static func scope<ChildState, ChildAction>(
        state toChildState: any WritableKeyPath<State, ChildState> & Sendable,
        action toChildAction: ActionCase<Action, ChildAction>,
        child: Reducer<ChildState, ChildAction>
    ) -> Self {
        Self { state, action in
            guard let childAction = toChildAction.extract(action) else { return .none }
            return child.reduce(&state[keyPath: toChildState], childAction)
                .presented(below: toChildState)
                .map(toChildAction.embed)
        }
    }

    /// Runs `child` on optional state while it is present, before this reducer, for the actions of one case.
    ///
    /// ```swift
    /// appReducer.ifLet(\.editor, action: ActionCase(AppAction.editor), then: editorReducer)
    /// ```
    ///
    /// The child runs first, so that this reducer can end the child (set the state to `nil`) on the same action.
    /// Ending it cancels the child's effects, those of that action included, as ``Effect/cancel(id:)`` would: no
    /// action they send afterwards is applied. A child action that still arrives while the state is `nil` (sent by
    /// some other means) is ignored by the child and still reaches this reducer.
    ///
    /// The child is ended by this reducer only: one combined after it, or an outer one, that sets the state to `nil`
    /// does not cancel the child's effects. Children that are `Identifiable` are told apart: replacing one by a child
    /// with another `id` ends it.
    public func ifLet<ChildState, ChildAction>(
        _ toChildState: any WritableKeyPath<State, ChildState?> & Sendable,
        action toChildAction: ActionCase<Action, ChildAction>,
        then child: Reducer<ChildState, ChildAction>
    ) -> Self {
        ifLet(toChildState, action: toChildAction, then: child, identity: { _ in true })
    }

    /// Runs `child` on optional state while it is present, as ``ifLet(_:action:then:)-561ln``; a child replaced by
    /// one with another `id` is ended too, its effects cancelled, so that they do not reach the child that replaced
    /// it.
    public func ifLet<ChildState: Identifiable & Sendable, ChildAction>(
        _ toChildState: any WritableKeyPath<State, ChildState?> & Sendable,
        action toChildAction: ActionCase<Action, ChildAction>,
        then child: Reducer<ChildState, ChildAction>
    ) -> Self where ChildState.ID: Sendable {
        ifLet(toChildState, action: toChildAction, then: child, identity: { $0.id })
    }

    /// `ifLet`, where a child whose `identity` changed is another child: the one before has ended.
    private func ifLet<ChildState, ChildAction, Identity: Equatable & Sendable>(
        _ toChildState: any WritableKeyPath<State, ChildState?> & Sendable,
        action toChildAction: ActionCase<Action, ChildAction>,
        then child: Reducer<ChildState, ChildAction>,
        identity: @escaping @Sendable (ChildState) -> Identity
    ) -> Self {
        let childEffects = PresentedChildEffects(keyPath: toChildState)
        return Self { state, action in
            let presented = state[keyPath: toChildState].map(identity)
            var childEffect = Effect<Action>.none
            if let childAction = toChildAction.extract(action), presented != nil {
                childEffect = child.reduce(&state[keyPath: toChildState]!, childAction)
                    .presented(below: toChildState)
                    .map(toChildAction.embed)
                    .cancellable(id: childEffects)
            }
            let effect = reduce(&state, action)
            guard let presented, state[keyPath: toChildState].map(identity) != presented else {
                return .merge(childEffect, effect)
            }
            return .merge(childEffect, effect, .cancel(id: childEffects))
        }
    }

    /// Runs `element` on the element with a given id, for the actions of one case that carries the id and the
    /// element's action, before this reducer.
    ///
    /// ```swift
    /// enum TodosAction: Sendable { case todo(id: Todo.ID, action: TodoAction), add }
    /// todosReducer.forEach(\.todos, action: ActionCase(TodosAction.todo), element: todoReducer)
    /// ```
    ///
    /// An action for an id that is not in the collection (an element removed while its effect ran) is ignored by
    /// `element` and still reaches this reducer. Each element's effects have cancellation ids of their own: an
    /// element cancels only its own, and the parent cancels one element's with ``ElementEffectID``.
    ///
    /// - Complexity: O(*n*) to find the element, for *n* elements.
    public func forEach<Element: Identifiable & Sendable, ElementAction>(
        _ toElements: any WritableKeyPath<State, [Element]> & Sendable,
        action toElementAction: ActionCase<Action, (Element.ID, ElementAction)>,
        element: Reducer<Element, ElementAction>
    ) -> Self where Element.ID: Sendable {
        Self { state, action in
            var elementEffect = Effect<Action>.none
            if let (id, elementAction) = toElementAction.extract(action),
                let index = state[keyPath: toElements].firstIndex(where: { $0.id == id })
            {
                // Each element's cancellation ids are its own: one row's `cancelInFlight` must not stop another's.
                elementEffect = element.reduce(&state[keyPath: toElements][index], elementAction)
                    .namespaced(by: AnyHashableSendable(id))
                    .map { toElementAction.embed((id, $0)) }
            }
            return .merge(elementEffect, reduce(&state, action))
        }
    }
}

extension ActionCase {
    /// A case that carries an element's id and its action, given by its constructor: `TodosAction.todo`.
    public init<ID: Sendable, ElementAction: Sendable>(
        _ embed: @escaping @Sendable (ID, ElementAction) -> Parent
    ) where Child == (ID, ElementAction) {
        self.init { child in embed(child.0, child.1) }
    }
}
